"""The MCP endpoint in process, on both backends: raw JSON-RPC through the app, and its host checks.

The official client against a real server is in `tests/env_server/api/test_mcp.py`; these are the fast checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.mcp.endpoint import transport_security
from env_server.settings import LOOPBACK_HOSTS, Settings
from tests.factories import start_episode

HEADERS = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def mcp_client(settings: Settings, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    # TestClient sends `Host: testserver`: allowed here like a server's public name would be
    app = create_app(settings.model_copy(update={"mcp_allowed_hosts": ["testserver"]}), registry=toy_registry)
    with TestClient(app) as client:
        yield client


def rpc(client: TestClient, episode_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    response = client.post(f"/v1/episodes/{episode_id}/mcp", json=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_list_and_call_through_the_app(mcp_client: TestClient) -> None:
    eid = start_episode(mcp_client)
    tools = rpc(mcp_client, eid, "tools/list", {})["result"]["tools"]
    rest_tools = mcp_client.get("/v1/domains/toybank").json()["tools"]
    assert [t["name"] for t in tools] == [t["function"]["name"] for t in rest_tools]
    called = rpc(
        mcp_client, eid, "tools/call", {"name": "get_account", "arguments": {"account_id": "AC-0001"}}
    )
    assert (
        called["result"]["isError"] is False
        and called["result"]["structuredContent"]["balance_cents"] == 10000
    )
    refused = rpc(
        mcp_client, eid, "tools/call", {"name": "get_account", "arguments": {"account_id": "AC-9999"}}
    )
    assert refused["result"]["isError"] is True and "AC-9999" in refused["result"]["content"][0]["text"]
    events = mcp_client.get(f"/v1/episodes/{eid}").json()["events"]
    assert [e["kind"] for e in events] == ["user_message", "tool_call", "tool_call"]


def test_without_the_app_lifespan_the_endpoint_says_so(
    settings: Settings, toy_registry: DomainRegistry
) -> None:
    app = create_app(settings.model_copy(update={"mcp_allowed_hosts": ["testserver"]}), registry=toy_registry)
    client = TestClient(app)  # no `with`: the lifespan (and the SDK's session manager) never ran
    response = client.post("/v1/episodes/any/mcp", json={}, headers=HEADERS)
    assert response.status_code == 503 and "lifespan" in response.json()["error"]["message"]
    assert response.json()["error"]["data"]["code"] == "backend-error"


def test_default_hosts_are_loopback_unless_bound_elsewhere_with_a_key() -> None:
    assert Settings().mcp_allowed_hosts == list(LOOPBACK_HOSTS)
    assert Settings(host="0.0.0.0", api_key="k").mcp_allowed_hosts == ["*"]
    assert Settings(host="0.0.0.0", api_key="k", mcp_allowed_hosts=["gs.example"]).mcp_allowed_hosts == [
        "gs.example"
    ]


def test_transport_security_allows_the_hosts_and_their_origins() -> None:
    guarded = transport_security(["gs.example", "gs.example:*"])
    assert guarded.enable_dns_rebinding_protection and guarded.allowed_hosts == ["gs.example", "gs.example:*"]
    assert "https://gs.example:*" in guarded.allowed_origins
    assert not transport_security(["*"]).enable_dns_rebinding_protection
