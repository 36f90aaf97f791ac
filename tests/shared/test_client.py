"""The shared HTTP client against the real app (ASGI transport) and against edge cases (mock transport)."""

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient, GroundstateClient, OverCapacityRetry
from shared.errors import ApiError, TransportError
from tests.live_server import free_port, serve


@pytest.mark.parametrize("sandbox_url", ["sqlite://"])
def test_async_client_runs_an_episode_through_asgi(settings: Settings, toy_registry: DomainRegistry) -> None:
    app = create_app(settings, registry=toy_registry)

    async def run() -> int | None:
        async with AsyncGroundstateClient("http://test", transport=httpx.ASGITransport(app=app)) as c:
            started = await c.start_episode("toybank-transfer-001")
            await c.call_tool(
                started.episode_id,
                "transfer",
                {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000},
            )
            await c.send_message(started.episode_id, "transfer complete")
            return (await c.score(started.episode_id)).reward

    assert asyncio.run(run()) == 1


def test_api_error_carries_code_and_field() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            404, json={"error": {"code": "unknown-task", "message": "unknown task 'x'", "field": "task_id"}}
        )

    with (
        GroundstateClient("http://t", transport=httpx.MockTransport(handler)) as c,
        pytest.raises(ApiError) as err,
    ):
        c.start_episode("x")
    assert (err.value.status, err.value.code, err.value.field, err.value.retriable) == (
        404,
        "unknown-task",
        "task_id",
        False,
    )


def test_backend_error_is_retriable_and_non_json_errors_are_reported() -> None:
    responses = iter(
        [
            httpx.Response(503, json={"error": {"code": "backend-error", "message": "db down"}}),
            httpx.Response(502, text="<html>bad gateway</html>"),
        ]
    )
    with GroundstateClient("http://t", transport=httpx.MockTransport(lambda r: next(responses))) as c:
        with pytest.raises(ApiError) as first:
            c.score("e1")
        with pytest.raises(ApiError) as second:
            c.score("e1")
    assert first.value.retriable and first.value.code == "backend-error"
    assert second.value.code == "http-error" and "bad gateway" in second.value.message


def test_unreachable_server_is_a_retriable_transport_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with (
        GroundstateClient("http://t", transport=httpx.MockTransport(refuse)) as c,
        pytest.raises(TransportError) as e,
    ):
        c.domains()
    assert e.value.retriable


class _RequestCounter:
    """Counts the requests that go through aiohttp's `ClientSession.request` (the default transport's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = aiohttp.ClientSession.request

        def counting(session: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(session, *args, **kwargs)

        monkeypatch.setattr(aiohttp.ClientSession, "request", counting)


def test_async_client_talks_to_a_live_server_over_aiohttp(
    tmp_path: Path, toy_registry: DomainRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request of an episode goes over aiohttp, with the key; the errors keep their shapes."""
    aiohttp_requests = _RequestCounter(monkeypatch)
    settings = Settings(
        store_url=f"sqlite:///{tmp_path}/s.db", sandbox_url="sqlite://", api_key="k3y", max_request_bytes=4096
    )

    async def run(url: str) -> tuple[int | None, ApiError, ApiError, ApiError, ApiError]:
        async with AsyncGroundstateClient(url, api_key="k3y", max_connections=2) as c:
            started = await c.start_episode("toybank-transfer-001")
            transfer = {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}
            await c.call_tool(started.episode_id, "transfer", transfer)
            await c.send_message(started.episode_id, "transfer complete")
            reward = (await c.score(started.episode_id)).reward
            with pytest.raises(ApiError) as unknown:
                await c.start_episode("no-such-task")
            with pytest.raises(ApiError) as too_long:  # refused by the client, as the server would (422)
                await c.send_message(started.episode_id, "x" * 40_000)
            with pytest.raises(ApiError) as too_large:  # over the server's body limit (413)
                await c.call_tool(started.episode_id, "get_account", {"account_id": "x" * 5000})
        async with AsyncGroundstateClient(url, api_key="wrong") as c:
            with pytest.raises(ApiError) as refused:
                await c.domains()
        return reward, unknown.value, too_long.value, too_large.value, refused.value

    with serve(create_app(settings, registry=toy_registry)) as url:
        reward, unknown, too_long, too_large, refused = asyncio.run(run(url))
    assert reward == 1
    assert (unknown.status, unknown.code, unknown.field) == (404, "unknown-task", "task_id")
    assert (too_long.status, too_long.code, too_long.field) == (422, "invalid-request", "content")
    assert (too_large.status, too_large.code, too_large.retriable) == (413, "request-too-large", False)
    assert (refused.status, refused.code) == (401, "unauthorized")
    # start, tool call, message, score, unknown task, oversized call, domains: all over aiohttp
    assert aiohttp_requests.count == 7


def test_async_client_failures_over_aiohttp_are_retriable_transport_errors() -> None:
    """Nothing listening, and a server that never answers within the timeout."""

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)
        writer.close()

    async def run() -> tuple[TransportError, TransportError]:
        async with AsyncGroundstateClient(f"http://127.0.0.1:{free_port()}") as c:
            with pytest.raises(TransportError) as refused:
                await c.domains()
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, AsyncGroundstateClient(f"http://127.0.0.1:{port}", timeout=0.3) as c:
            with pytest.raises(TransportError) as timed_out:
                await c.domains()
        return refused.value, timed_out.value

    refused, timed_out = asyncio.run(run())
    assert refused.retriable and timed_out.retriable
    assert "Timeout" in str(timed_out)


def test_an_older_client_reads_a_newer_servers_answers_ignoring_fields_it_does_not_know() -> None:
    """A trainer keeps working when the server it talks to gained response fields (nested ones too)."""
    started = {
        "episode_id": "ep1", "task_id": "t", "domain": "d", "system_prompt": "p", "tools": [],
        "tool_kinds": {}, "first_message": "hi", "user": "scripted", "a_field_from_the_future": {"x": 1},
    }  # fmt: skip
    reply = {"content": "ok", "done": False, "future": [1, 2]}

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=started if request.url.path == "/v1/episodes" else reply)

    with GroundstateClient("http://t", transport=httpx.MockTransport(server)) as c:
        assert c.start_episode("t").episode_id == "ep1"
        assert c.send_message("ep1", "hello").content == "ok"


def test_a_keyed_tool_call_is_resent_with_its_key_after_a_retriable_failure() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        if len(seen) == 1:
            return httpx.Response(503, json={"error": {"code": "backend-error", "message": "restarting"}})
        return httpx.Response(200, json={"name": "transfer", "output": "TR-90001"})

    with GroundstateClient("http://t", transport=httpx.MockTransport(handler)) as c:
        result = c.call_tool("ep", "transfer", {"amount_cents": 1}, idempotency_key="k-7")
        assert result.output == "TR-90001"
        assert [b["idempotency_key"] for b in seen] == ["k-7", "k-7"]
        seen.clear()
        with pytest.raises(ApiError):  # without a key a resend could run the write twice: not resent
            c.call_tool("ep", "transfer", {"amount_cents": 1})
        assert len(seen) == 1


def _over_capacity(retry_after: str = "0") -> httpx.Response:
    body = {"error": {"code": "over-capacity", "message": "at capacity", "field": None}}
    return httpx.Response(503, json=body, headers={"retry-after": retry_after})


_STARTED = {
    "episode_id": "e1",
    "task_id": "t1",
    "domain": "toy",
    "system_prompt": "policy",
    "tools": [],
    "tool_kinds": {},
    "first_message": "hi",
    "user": "scripted",
}


def test_both_clients_wait_out_over_capacity_refusals_then_succeed() -> None:
    def transport() -> httpx.MockTransport:
        answers = iter([_over_capacity(), _over_capacity(), httpx.Response(201, json=_STARTED)])
        return httpx.MockTransport(lambda r: next(answers))

    with GroundstateClient("http://t", transport=transport()) as c:
        assert c.start_episode("t1").episode_id == "e1"

    async def run() -> str:
        async with AsyncGroundstateClient("http://t", transport=transport()) as ac:
            return (await ac.start_episode("t1")).episode_id

    assert asyncio.run(run()) == "e1"


def test_over_capacity_past_the_retry_budget_and_other_503s_are_raised_at_once() -> None:
    sent: list[int] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        return _over_capacity("7")

    few = OverCapacityRetry(attempts=2, budget_s=0.0)  # 7 s is past the budget: not waited
    client = GroundstateClient("http://t", transport=httpx.MockTransport(refuse), over_capacity=few)
    with client as c, pytest.raises(ApiError) as caught:
        c.start_episode("t1")
    assert (caught.value.code, caught.value.retry_after, caught.value.retriable, len(sent)) == (
        "over-capacity",
        7.0,
        True,
        1,
    )
    backend = {"error": {"code": "backend-error", "message": "db down", "field": None}}
    answers = iter([httpx.Response(503, json=backend), httpx.Response(201, json=_STARTED)])
    client = GroundstateClient("http://t", transport=httpx.MockTransport(lambda r: next(answers)))
    with (
        client as c,
        pytest.raises(ApiError, match="backend-error"),
    ):  # it may have worked: the rollout decides
        c.start_episode("t1")


def test_the_wait_honours_retry_after_and_spreads_refusals_within_a_doubling_window() -> None:
    policy = OverCapacityRetry(attempts=5, budget_s=100.0, max_jitter_s=30.0)
    refusal = ApiError(503, "over-capacity", "full", retry_after=2.0)
    for attempt in range(5):
        waits = [policy.delay(refusal, attempt, waited=0.0) for _ in range(200)]
        assert all(w is not None and 2.0 <= w <= 2.0 + min(30.0, 2.0 * 2**attempt) for w in waits)
        assert len(set(waits)) > 100  # jittered, not one wave
    assert policy.delay(refusal, 5, waited=0.0) is None  # attempts used up
    assert policy.delay(refusal, 0, waited=99.0) is None  # the budget would be passed
