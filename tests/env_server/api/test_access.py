"""The bearer key and the Prometheus metrics, as every request meets them."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.factories import call, start_episode

KEY = "s3cret-key"


@pytest.fixture
def keyed(tmp_path: Path, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", api_key=KEY)
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        yield client


@pytest.mark.parametrize("header", [None, "Bearer wrong-key", KEY[:-1], "Basic czNjcmV0LWtleQ=="])
def test_requests_without_the_right_key_are_refused(keyed: TestClient, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    response = keyed.get("/v1/domains", headers=headers)
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "unauthorized" and error["field"] == "authorization"
    assert "Bearer" in error["message"]


def test_the_right_key_opens_the_api_and_liveness_needs_none(keyed: TestClient) -> None:
    assert keyed.get("/v1/domains", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert keyed.get("/healthz").status_code == 200
    assert keyed.get("/openapi.json").status_code == 200


def test_metrics_count_requests_per_route_template_and_status(client: TestClient) -> None:
    eid = start_episode(client)
    call(client, eid, "get_account", account_id="AC-0001")
    client.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "no_such_tool", "arguments": {}})
    client.get("/v1/episodes/not-an-episode")
    text = client.get("/metrics").text
    route = 'route="/v1/episodes/{episode_id}/tool_calls"'
    assert f'groundstate_requests_total{{{route},status="200"}}' in text
    assert f'groundstate_requests_total{{{route},status="422"}}' in text
    assert 'groundstate_requests_total{route="/v1/episodes/{episode_id}",status="404"}' in text
    assert f"groundstate_request_seconds_count{{{route}}}" in text
    assert eid not in text  # labels are route templates, never ids


def test_oversized_bodies_are_refused_before_any_work(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", max_request_bytes=4096)
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        eid = start_episode(client)
        big = {"name": "get_account", "arguments": {"account_id": "x" * 5000}}
        response = client.post(f"/v1/episodes/{eid}/tool_calls", json=big)
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == "request-too-large" and "GROUNDSTATE_MAX_REQUEST_BYTES" in error["message"]
        kinds = [e["kind"] for e in client.get(f"/v1/episodes/{eid}").json()["events"]]
        assert kinds == ["user_message"]  # nothing was recorded


@pytest.mark.parametrize("field", ["tool_calls", "messages"])
def test_trajectories_longer_than_the_limits_are_422_naming_the_field(client: TestClient, field: str) -> None:
    item = {"name": "get_account"} if field == "tool_calls" else {"role": "user", "content": "hi"}
    response = client.post("/v1/score", json={"task_id": "toybank-transfer-001", field: [item] * 2001})
    assert response.status_code == 422 and response.json()["error"]["field"] == field


def test_a_message_longer_than_the_limit_is_422(client: TestClient) -> None:
    eid = start_episode(client)
    response = client.post(f"/v1/episodes/{eid}/messages", json={"content": "x" * 32_001})
    assert response.status_code == 422 and response.json()["error"]["field"] == "content"
