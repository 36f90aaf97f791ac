"""`create_app(settings)`: wires routers, store, sandbox engine, domain registry and simulated users."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from prometheus_client import Counter, Histogram

from env_server.api import routers
from env_server.api.errors import install_error_handlers, render_error
from env_server.domain.registry import DomainRegistry
from env_server.episodes.service import EpisodeService
from env_server.errors import UnauthorizedError
from env_server.judge import Judge
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.settings import Settings
from env_server.store import Store, make_store_engine, upgrade
from env_server.users.base import SimulatedUser
from env_server.users.endpoint import LLMEndpoint
from env_server.users.llm import LLMUser
from env_server.users.scripted import ScriptedUser

REQUESTS = Counter("groundstate_requests_total", "HTTP requests", ["route", "status"])
LATENCY = Histogram(
    "groundstate_request_seconds",
    "HTTP request latency",
    ["route"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5),
)
_OPEN_PATHS = ("/healthz", "/docs", "/openapi.json", "/redoc")


def build_users(settings: Settings) -> dict[str, SimulatedUser]:
    """The simulated users this server offers: scripted always, LLM when an endpoint is configured."""
    users: dict[str, SimulatedUser] = {"scripted": ScriptedUser()}
    if settings.user_base_url:
        endpoint = LLMEndpoint(
            base_url=settings.user_base_url,
            model=settings.user_model,
            api_key=settings.user_api_key,
            temperature=settings.user_temperature,
            seed=settings.user_seed,
            max_tokens=settings.user_max_tokens,
            timeout_s=settings.user_timeout_s,
        )
        users["llm"] = LLMUser(endpoint, max_user_turns=settings.user_max_turns)
    return users


def build_judge(settings: Settings) -> Judge | None:
    """The rubric judge, when an endpoint is configured."""
    if not settings.judge_base_url:
        return None
    endpoint = LLMEndpoint(
        base_url=settings.judge_base_url,
        model=settings.judge_model,
        api_key=settings.judge_api_key,
        timeout_s=settings.judge_timeout_s,
        max_retries=settings.judge_max_retries,
    )
    return Judge(endpoint)


def build_service(settings: Settings, registry: DomainRegistry | None = None) -> EpisodeService:
    """The episode service with its store, sandboxes and scorer, as `settings` say."""
    registry = registry or DomainRegistry.discover(settings.tasks_dirs, only=settings.domains)
    if settings.auto_migrate:
        upgrade(settings.store_url)
    store = Store(make_store_engine(settings.store_url))
    sandboxes = make_sandbox_engine(settings.sandbox_url)
    return EpisodeService(
        registry,
        sandboxes,
        store,
        Scorer(sandboxes, judge=build_judge(settings)),
        build_users(settings),
        default_user=settings.default_user,
    )


def create_app(settings: Settings | None = None, registry: DomainRegistry | None = None) -> FastAPI:
    """Build the FastAPI application; nothing is created at import time."""
    settings = settings or Settings()
    service = build_service(settings, registry)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        for user in service.users.values():
            user.close()
        if service.scorer.judge is not None:
            service.scorer.judge.close()
        service.sandboxes.close()
        service.store.engine.dispose()

    app = FastAPI(
        title="groundstate",
        version="0.1.0",
        summary="Sandboxed business databases for tool-using agents, rewarded by the state they leave.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.episodes = service
    app.state.registry = service.registry
    install_error_handlers(app)
    for router in routers:
        app.include_router(router)
    _install_middleware(app, settings)
    return app


def _install_middleware(app: FastAPI, settings: Settings) -> None:
    api_key = settings.api_key

    @app.middleware("http")
    async def observe(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if api_key and not request.url.path.startswith(_OPEN_PATHS):
            supplied = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not secrets.compare_digest(supplied, api_key):
                err = UnauthorizedError("missing or wrong bearer API key (Authorization: Bearer <key>)")
                return render_error(err.status, err.code, err.message, "authorization")
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        name = getattr(route, "path", "unmatched")
        LATENCY.labels(name).observe(time.perf_counter() - start)
        REQUESTS.labels(name, str(response.status_code)).inc()
        return response
