"""HTTP clients for the groundstate API: `GroundstateClient` (sync) and `AsyncGroundstateClient`.

Both share one request/response layer (`_Api`), so they cannot drift apart; responses are parsed into the
wire models of `shared.models`, and failures become `ApiError` or `TransportError`. A server at capacity
answers 503 `over-capacity` with `Retry-After` before doing any work: both clients wait that long plus
jitter and send the request again, within the budget of `OverCapacityRetry`.

The async client is an `httpx.AsyncClient` whose default transport is aiohttp's (`httpx-aiohttp`, as the
openai SDK's `DefaultAioHttpClient`): a trainer keeps 100+ episodes in flight, and there httpx's own
connection pool costs ~5x aiohttp's per request (`benchmarks/wave.py` compares them in one run).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from httpx_aiohttp import HttpxAiohttpClient
from pydantic import BaseModel, TypeAdapter, ValidationError

from shared.errors import ApiError, ClientError, TransportError
from shared.models import (
    DomainDetail,
    DomainSummary,
    EpisodeInfo,
    EpisodeStarted,
    ErrorResponse,
    MessageRequest,
    MintRequest,
    MintResult,
    ReferenceTrajectory,
    ScoreRequest,
    ScoreResult,
    StartEpisodeRequest,
    ToolCallRequest,
    ToolCallResult,
    TrajectoryScore,
    UserReply,
)
from shared.tasks import Task, TaskPublic

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
DEFAULT_SERVER_URL = "http://127.0.0.1:8000"
#: Resends of a tool call that carries an idempotency key, after a transport failure or a 503 (the server
#: runs it at most once), and the wait before the first (doubling).
TOOL_RESENDS = 2
RESEND_BACKOFF_S = 0.2
"""The environment server's address when none is given: the one default of every client and command."""

# Built once: a TypeAdapter costs more to build than the answer it parses.
_DOMAINS = TypeAdapter(list[DomainSummary])
_DOMAIN = TypeAdapter(DomainDetail)
_TASKS = TypeAdapter(list[TaskPublic])
_TASK_PUBLIC: TypeAdapter[Any] = TypeAdapter(TaskPublic)
_TASK_GOLD: TypeAdapter[Any] = TypeAdapter(Task)
_STARTED = TypeAdapter(EpisodeStarted)
_TOOL_RESULT = TypeAdapter(ToolCallResult)
_REPLY = TypeAdapter(UserReply)
_SCORE = TypeAdapter(ScoreResult)
_INFO = TypeAdapter(EpisodeInfo)
_TRAJECTORY_SCORE = TypeAdapter(TrajectoryScore)
_REFERENCE = TypeAdapter(ReferenceTrajectory)
_MINT = TypeAdapter(MintResult)


@dataclass(frozen=True)
class _Call:
    """One API call: method, path, body, and how to parse the answer."""

    method: str
    path: str
    parse: TypeAdapter[Any] | None
    json: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    """A longer read timeout than the client's, for calls that work for long (minting)."""

    def options(self) -> dict[str, Any]:
        """The request's keyword arguments."""
        extra: dict[str, Any] = (
            {} if self.timeout is None else {"timeout": httpx.Timeout(self.timeout, connect=5.0)}
        )
        return {"json": self.json, "params": self.params or None, **extra}


class _Api:
    """The API surface as `_Call`s, shared by the sync and async clients."""

    @staticmethod
    def domains() -> _Call:
        return _Call("GET", "/v1/domains", _DOMAINS)

    @staticmethod
    def domain(name: str) -> _Call:
        return _Call("GET", f"/v1/domains/{name}", _DOMAIN)

    @staticmethod
    def tasks(domain: str | None, split: str | None) -> _Call:
        params = {k: v for k, v in {"domain": domain, "split": split}.items() if v is not None}
        return _Call("GET", "/v1/tasks", _TASKS, params=params)

    @staticmethod
    def task(task_id: str, include_gold: bool) -> _Call:
        adapter = _TASK_GOLD if include_gold else _TASK_PUBLIC
        return _Call("GET", f"/v1/tasks/{task_id}", adapter, params={"include_gold": include_gold})

    @staticmethod
    def reference(task_id: str) -> _Call:
        return _Call("GET", f"/v1/tasks/{task_id}/reference", _REFERENCE)

    @staticmethod
    def start(request: StartEpisodeRequest) -> _Call:
        return _Call("POST", "/v1/episodes", _STARTED, json=_dump(request))

    @staticmethod
    def tool_call(episode_id: str, request: ToolCallRequest) -> _Call:
        return _Call("POST", f"/v1/episodes/{episode_id}/tool_calls", _TOOL_RESULT, json=_dump(request))

    @staticmethod
    def message(episode_id: str, content: str) -> _Call:
        body = _dump(_checked(MessageRequest, content=content))
        return _Call("POST", f"/v1/episodes/{episode_id}/messages", _REPLY, json=body)

    @staticmethod
    def score(episode_id: str) -> _Call:
        return _Call("POST", f"/v1/episodes/{episode_id}/score", _SCORE)

    @staticmethod
    def episode(episode_id: str) -> _Call:
        return _Call("GET", f"/v1/episodes/{episode_id}", _INFO)

    @staticmethod
    def dispose(episode_id: str) -> _Call:
        return _Call("DELETE", f"/v1/episodes/{episode_id}", None)

    @staticmethod
    def score_trajectory(request: ScoreRequest) -> _Call:
        return _Call("POST", "/v1/score", _TRAJECTORY_SCORE, json=_dump(request))

    @staticmethod
    def mint(request: MintRequest) -> _Call:
        # every task is generated and validated inside the call: about a second each, more on a busy server
        return _Call("POST", "/v1/tasks/mint", _MINT, json=_dump(request), timeout=60.0 + 10.0 * request.n)


def _checked(model: type[M], **fields: Any) -> M:
    """Build a request model; a value the server would refuse is refused here, as the same 422 `ApiError`."""
    try:
        return model(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise ApiError(422, "invalid-request", f"{field}: {first['msg']}", field) from None


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude_none=True)


def _parse(call: _Call, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            err = ErrorResponse.model_validate(response.json()).error
        except ValueError:
            raise ApiError(response.status_code, "http-error", response.text[:500]) from None
        raise ApiError(response.status_code, err.code, err.message, err.field, _retry_after(response))
    # fields this client does not know are a newer server's additions: ignored, so an older trainer keeps
    # working against an upgraded server (requests stay strict on the server's side)
    return None if call.parse is None else call.parse.validate_python(response.json(), extra="ignore")


@dataclass(frozen=True)
class OverCapacityRetry:
    """How a client waits out a server at capacity (503 `over-capacity`): what a trainer's burst needs.

    The server refused before doing anything, so sending the request again is always safe. Each wait is
    the server's `Retry-After` plus a random share of a window that doubles with every refusal (up to
    `max_jitter_s`): a burst of a thousand refused starts comes back spread out, not as one wave again.
    Past `attempts` refusals of one request, or `budget_s` seconds waited for it, the refusal is raised
    (a retriable `ApiError`: the trainer's rollout then ends as a backend error, never a 0).
    """

    attempts: int = 10
    """Refusals of one request waited out before giving up (0: none)."""
    budget_s: float = 300.0
    """Seconds one request may spend waiting in all."""
    max_jitter_s: float = 30.0
    """Largest random addition to one wait."""

    def delay(self, exc: ApiError, attempt: int, waited: float) -> float | None:
        """Seconds to wait before sending again after refusal number `attempt` (0 first); None: give up."""
        if exc.code != "over-capacity" or attempt >= self.attempts:
            return None
        base = exc.retry_after if exc.retry_after is not None else 1.0
        wait = base + random.uniform(0, min(self.max_jitter_s, base * 2**attempt))
        return wait if waited + wait <= self.budget_s else None


def _retry_after(response: httpx.Response) -> float | None:
    """The `Retry-After` header in seconds (delay-seconds; an HTTP date is not sent by our server)."""
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class GroundstateClient:
    """Synchronous client. Use as a context manager, or call `close()`."""

    def __init__(
        self,
        base_url: str = DEFAULT_SERVER_URL,
        *,
        api_key: str | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        over_capacity: OverCapacityRetry = OverCapacityRetry(),  # frozen: shared safely
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, timeout=timeout, headers=_headers(api_key), transport=transport
        )
        self._over_capacity = over_capacity

    def _run(self, call: _Call) -> Any:
        """Send the call, waiting out over-capacity refusals (`OverCapacityRetry`)."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return self._once(call)
            except ApiError as exc:
                delay = self._over_capacity.delay(exc, attempt, waited)
                if delay is None:
                    raise
            time.sleep(delay)
            attempt, waited = attempt + 1, waited + delay

    def _once(self, call: _Call) -> Any:
        try:
            response = self._http.request(call.method, call.path, **call.options())
        except httpx.TransportError as exc:
            raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
        return _parse(call, response)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def domains(self) -> list[DomainSummary]:
        """Installed domains."""
        return self._run(_Api.domains())  # type: ignore[no-any-return]

    def domain(self, name: str) -> DomainDetail:
        """One domain's policy and tools."""
        return self._run(_Api.domain(name))  # type: ignore[no-any-return]

    def tasks(self, domain: str | None = None, split: str | None = None) -> list[TaskPublic]:
        """The task catalogue."""
        return self._run(_Api.tasks(domain, split))  # type: ignore[no-any-return]

    def task(self, task_id: str, include_gold: bool = False) -> Task | TaskPublic:
        """One task (the full file with `include_gold`)."""
        return self._run(_Api.task(task_id, include_gold))  # type: ignore[no-any-return]

    def reference(self, task_id: str) -> ReferenceTrajectory:
        """A task's reference conversation (it holds the gold: never show it to an agent)."""
        return self._run(_Api.reference(task_id))  # type: ignore[no-any-return]

    def start_episode(self, task_id: str, user: str | None = None, seed: int | None = None) -> EpisodeStarted:
        """Start an episode."""
        return self._run(_Api.start(StartEpisodeRequest(task_id=task_id, user=user, seed=seed)))  # type: ignore[arg-type]

    def call_tool(
        self,
        episode_id: str,
        name: str,
        arguments: dict[str, Any] | None = None,
        call_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> ToolCallResult:
        """Run a tool in the episode's sandbox; with `idempotency_key`, resent on a retriable failure.

        A resend with the same key returns the first run's result, so the call runs at most once.
        """
        request = _checked(
            ToolCallRequest,
            name=name,
            arguments=arguments or {},
            call_id=call_id,
            idempotency_key=idempotency_key,
        )
        call = _Api.tool_call(episode_id, request)
        for attempt in range(TOOL_RESENDS + 1):
            try:
                return self._run(call)  # type: ignore[no-any-return]
            except ClientError as exc:
                if idempotency_key is None or not exc.retriable or attempt == TOOL_RESENDS:
                    raise
                time.sleep(RESEND_BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable")

    def send_message(self, episode_id: str, content: str) -> UserReply:
        """Send an assistant message; returns the user's reply."""
        return self._run(_Api.message(episode_id, content))  # type: ignore[no-any-return]

    def score(self, episode_id: str) -> ScoreResult:
        """End and score the episode."""
        return self._run(_Api.score(episode_id))  # type: ignore[no-any-return]

    def episode(self, episode_id: str) -> EpisodeInfo:
        """Inspect an episode."""
        return self._run(_Api.episode(episode_id))  # type: ignore[no-any-return]

    def dispose(self, episode_id: str) -> None:
        """Dispose of an episode."""
        self._run(_Api.dispose(episode_id))

    def score_trajectory(self, request: ScoreRequest) -> TrajectoryScore:
        """Score a trajectory statelessly."""
        return self._run(_Api.score_trajectory(request))  # type: ignore[no-any-return]

    def mint(self, request: MintRequest) -> MintResult:
        """Have the server generate, validate and serve fresh train tasks."""
        return self._run(_Api.mint(request))  # type: ignore[no-any-return]


class AsyncGroundstateClient:
    """Asynchronous client with the same methods as `GroundstateClient`, awaited.

    Requests go over aiohttp (`httpx_aiohttp.AiohttpTransport`, pooling up to `max_connections` kept-alive
    connections) unless a `transport` is given, e.g. `httpx.ASGITransport` in tests or
    `httpx.AsyncHTTPTransport()` for httpx's own pool. Either way errors, timeouts and the API key behave
    the same: the transport maps aiohttp's failures onto httpx's, which become `TransportError` here.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_SERVER_URL,
        *,
        api_key: str | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 100,
        over_capacity: OverCapacityRetry = OverCapacityRetry(),  # frozen: shared safely
    ) -> None:
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        # An httpx.AsyncClient whose default transport (and proxy transport) is aiohttp's.
        self._http: httpx.AsyncClient = HttpxAiohttpClient(
            base_url=base_url, timeout=timeout, headers=_headers(api_key), transport=transport, limits=limits
        )
        self._over_capacity = over_capacity

    async def _run(self, call: _Call) -> Any:
        """Send the call, waiting out over-capacity refusals (`OverCapacityRetry`)."""
        attempt, waited = 0, 0.0
        while True:
            try:
                return await self._once(call)
            except ApiError as exc:
                delay = self._over_capacity.delay(exc, attempt, waited)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
            attempt, waited = attempt + 1, waited + delay

    async def _once(self, call: _Call) -> Any:
        try:
            response = await self._http.request(call.method, call.path, **call.options())
        except httpx.TransportError as exc:
            raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
        return _parse(call, response)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def domains(self) -> list[DomainSummary]:
        """Installed domains."""
        return await self._run(_Api.domains())  # type: ignore[no-any-return]

    async def domain(self, name: str) -> DomainDetail:
        """One domain's policy and tools."""
        return await self._run(_Api.domain(name))  # type: ignore[no-any-return]

    async def tasks(self, domain: str | None = None, split: str | None = None) -> list[TaskPublic]:
        """The task catalogue."""
        return await self._run(_Api.tasks(domain, split))  # type: ignore[no-any-return]

    async def task(self, task_id: str, include_gold: bool = False) -> Task | TaskPublic:
        """One task (the full file with `include_gold`)."""
        return await self._run(_Api.task(task_id, include_gold))  # type: ignore[no-any-return]

    async def reference(self, task_id: str) -> ReferenceTrajectory:
        """A task's reference conversation (it holds the gold: never show it to an agent)."""
        return await self._run(_Api.reference(task_id))  # type: ignore[no-any-return]

    async def start_episode(
        self, task_id: str, user: str | None = None, seed: int | None = None
    ) -> EpisodeStarted:
        """Start an episode."""
        return await self._run(_Api.start(StartEpisodeRequest(task_id=task_id, user=user, seed=seed)))  # type: ignore[arg-type]

    async def call_tool(
        self,
        episode_id: str,
        name: str,
        arguments: dict[str, Any] | None = None,
        call_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> ToolCallResult:
        """Run a tool in the episode's sandbox; with `idempotency_key`, resent on a retriable failure.

        A resend with the same key returns the first run's result, so the call runs at most once.
        """
        request = _checked(
            ToolCallRequest,
            name=name,
            arguments=arguments or {},
            call_id=call_id,
            idempotency_key=idempotency_key,
        )
        call = _Api.tool_call(episode_id, request)
        for attempt in range(TOOL_RESENDS + 1):
            try:
                return await self._run(call)  # type: ignore[no-any-return]
            except ClientError as exc:
                if idempotency_key is None or not exc.retriable or attempt == TOOL_RESENDS:
                    raise
                await asyncio.sleep(RESEND_BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable")

    async def send_message(self, episode_id: str, content: str) -> UserReply:
        """Send an assistant message; returns the user's reply."""
        return await self._run(_Api.message(episode_id, content))  # type: ignore[no-any-return]

    async def score(self, episode_id: str) -> ScoreResult:
        """End and score the episode."""
        return await self._run(_Api.score(episode_id))  # type: ignore[no-any-return]

    async def episode(self, episode_id: str) -> EpisodeInfo:
        """Inspect an episode."""
        return await self._run(_Api.episode(episode_id))  # type: ignore[no-any-return]

    async def dispose(self, episode_id: str) -> None:
        """Dispose of an episode."""
        await self._run(_Api.dispose(episode_id))

    async def score_trajectory(self, request: ScoreRequest) -> TrajectoryScore:
        """Score a trajectory statelessly."""
        return await self._run(_Api.score_trajectory(request))  # type: ignore[no-any-return]

    async def mint(self, request: MintRequest) -> MintResult:
        """Have the server generate, validate and serve fresh train tasks."""
        return await self._run(_Api.mint(request))  # type: ignore[no-any-return]
