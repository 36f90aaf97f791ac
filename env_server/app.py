"""`create_app(settings)`: wires routers, store, sandbox engine, domain registry and simulated users."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI
from starlette.routing import Route

from env_server.api import routers
from env_server.api.admission import InFlightMiddleware, reclaiming
from env_server.api.auth import AuthMiddleware
from env_server.api.body_limit import BodyLimitMiddleware
from env_server.api.errors import install_error_handlers
from env_server.api.observe import ObserveMiddleware
from env_server.domain.registry import DomainRegistry
from env_server.episodes.admission import Admission
from env_server.episodes.service import EpisodeService
from env_server.judge import LLMJudge
from env_server.llm import LLMEndpoint
from env_server.mcp import MCP_PATH, McpEndpoint
from env_server.openenv import router as openenv_router
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.settings import Settings
from env_server.store import Store, make_store_engine, upgrade
from env_server.store.minted import MintedTasks
from env_server.ui import install_viewer
from env_server.users.base import SimulatedUser
from env_server.users.llm import LLMUser
from env_server.users.scripted import ScriptedUser


def build_users(settings: Settings, registry: DomainRegistry) -> dict[str, SimulatedUser]:
    """The simulated users this server offers: scripted always, LLM when an endpoint is configured."""
    users: dict[str, SimulatedUser] = {"scripted": ScriptedUser(registry.domain)}
    if settings.user_base_url:
        endpoint = LLMEndpoint(
            base_url=settings.user_base_url,
            model=settings.user_model,
            api_key=settings.user_api_key,
            temperature=settings.user_temperature,
            seed=settings.user_seed,
            max_tokens=settings.user_max_tokens,
            timeout_s=settings.user_timeout_s,
            extra_body=settings.user_extra_body,
        )
        users["llm"] = LLMUser(
            endpoint, max_user_turns=settings.user_max_turns, tool_choice=settings.user_tool_choice
        )
    return users


def build_judge(settings: Settings) -> LLMJudge | None:
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
    return LLMJudge(endpoint)


def build_service(settings: Settings, registry: DomainRegistry | None = None) -> EpisodeService:
    """The episode service with its store, sandboxes and scorer, as `settings` say."""
    registry = registry or DomainRegistry.discover(settings.tasks_dirs, only=settings.domains)
    if settings.auto_migrate:
        upgrade(settings.store_url)
    store = Store(make_store_engine(settings.store_url, pool_size=settings.db_pool_size))
    registry = registry.with_source(MintedTasks(store))  # tasks minted for training runs, by any worker
    sandboxes = make_sandbox_engine(settings.sandbox_url, pool_size=settings.db_pool_size)
    return EpisodeService(
        registry,
        sandboxes,
        store,
        Scorer(sandboxes, judge=build_judge(settings)),
        build_users(settings, registry),
        default_user=settings.default_user,
        max_live_sandboxes=settings.max_live_sandboxes,
        sandbox_idle_s=settings.sandbox_idle_s,
        inline=settings.runs_inline,
        admission=Admission(
            max_live_episodes=settings.max_live_episodes,
            max_in_flight=settings.max_in_flight,
            retry_after_s=settings.retry_after_s,
            idle_timeout_s=settings.episode_idle_timeout_s,
        ),
    )


def create_app(settings: Settings | None = None, registry: DomainRegistry | None = None) -> FastAPI:
    """Build the FastAPI application; nothing is created at import time."""
    settings = settings or Settings()
    service = build_service(settings, registry)
    mcp = McpEndpoint(service, settings.mcp_allowed_hosts or (), settings.max_request_bytes)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # every route's blocking work runs on anyio's default thread pool: size it here
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.worker_threads
        async with mcp.lifespan(), reclaiming(service):
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
    install_viewer(app)
    # protocol adapters over the same episode service: MCP per episode, and an OpenEnv environment server
    app.router.routes.append(Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    app.include_router(openenv_router)
    # the last added runs first: every request is observed, then authenticated, then its size checked, then
    # counted in flight (or refused past the maximum)
    app.add_middleware(InFlightMiddleware, admission=service.admission)
    app.add_middleware(BodyLimitMiddleware, max_body=settings.max_request_bytes)
    app.add_middleware(AuthMiddleware, api_key=settings.api_key, previous_api_keys=settings.previous_api_keys)
    app.add_middleware(ObserveMiddleware, replica_id=settings.replica_id)
    return app
