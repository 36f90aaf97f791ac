"""The shared HTTP client against the real app (ASGI transport) and against edge cases (mock transport)."""

import asyncio

import httpx
import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.errors import ApiError, TransportError


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
