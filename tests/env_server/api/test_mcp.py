"""Episodes over MCP: the official SDK's client against a real `groundstate serve` process, with an API key.

Tools listed and called over MCP are the episode's own, run in its sandbox and recorded in the event log that
REST reads; the agent's mistakes come back as `is_error` tool results; the bearer key, the episode lookup
and the DNS-rebinding check guard the endpoint; the runnable example plays a gold trajectory that scores 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from shared.client import GroundstateClient
from tests.live_server import serve_process

pytestmark = pytest.mark.slow

KEY = "mcp-test-key"
TASK = "hotel-corp-modify-approval-001"
EXAMPLE = Path(__file__).parents[3] / "examples" / "mcp_client.py"
LEGACY_CLIENT = Path(__file__).with_name("mcp_legacy_client.py")
#: Runs the example as a script where none of groundstate's packages can be imported (only the MCP SDK).
_WITHOUT_GROUNDSTATE = """
import runpy, sys

class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {{"shared", "env_server", "trainer", "groundstate"}}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, NotInstalled())
sys.argv = [{example!r}, "--url", {url!r}, "--task", {task!r}]
runpy.run_path({example!r}, run_name="__main__")
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("mcp") / "store.db"
    env = {
        "GROUNDSTATE_STORE_URL": f"sqlite:///{store}",
        "GROUNDSTATE_DOMAINS": '["hotel"]',
        "GROUNDSTATE_API_KEY": KEY,
    }
    with serve_process(env) as base:
        yield base


@pytest.fixture
def rest(url: str) -> Iterator[GroundstateClient]:
    with GroundstateClient(url, api_key=KEY) as client:
        yield client


async def _session(url: str, episode_id: str, key: str | None, work: Any) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{url}/v1/episodes/{episode_id}/mcp", http_client=http)) as client,
    ):
        try:
            return await work(client)
        except MCPError as exc:  # returned: raised here, the client's task group would wrap it in a group
            return exc


def over_mcp(url: str, episode_id: str, work: Any, key: str | None = KEY) -> Any:
    """Run `work(client)` with an MCP client on the episode's endpoint (an MCP error is returned)."""
    return asyncio.run(_session(url, episode_id, key, work))


def call(name: str, arguments: dict[str, Any]) -> Any:
    async def work(client: Client) -> types.CallToolResult:
        return await client.call_tool(name, arguments)

    return work


def test_tools_list_is_exactly_the_episodes_tools(url: str, rest: GroundstateClient) -> None:
    started = rest.start_episode(TASK)

    async def work(client: Client) -> types.ListToolsResult:
        return await client.list_tools()

    listed = over_mcp(url, started.episode_id, work).tools
    expected = {t["function"]["name"]: t for t in started.tools}
    assert [t.name for t in listed] == list(expected)
    for tool in listed:
        entry = expected[tool.name]
        assert tool.input_schema == entry["function"]["parameters"]
        assert tool.description == entry["function"]["description"]
        assert tool.annotations is not None and tool.annotations.read_only_hint == (
            started.tool_kinds[tool.name] == "read"
        )


def test_call_runs_in_the_episode_and_is_recorded_with_rest_calls(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    result = over_mcp(url, eid, call("get_booking", {"booking_id": "BK-20417"}))
    assert not result.is_error
    over_rest = rest.call_tool(eid, "get_booking", {"booking_id": "BK-20417"})
    assert json.loads(result.content[0].text) == over_rest.output
    assert result.structured_content == over_rest.output
    calls = [e.payload for e in rest.episode(eid).events if e.kind == "tool_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_booking", {"booking_id": "BK-20417"})] * 2


def test_refusal_is_an_mcp_tool_error_and_is_recorded(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    result = over_mcp(url, eid, call("get_booking", {"booking_id": "BK-00000"}))
    assert result.is_error and "BK-00000" in result.content[0].text
    recorded = [e.payload for e in rest.episode(eid).events if e.kind == "tool_call"]
    assert recorded[0]["error"] == result.content[0].text


def test_invalid_arguments_and_unknown_tools_are_mcp_tool_errors(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    missing = over_mcp(url, eid, call("get_booking", {}))
    assert missing.is_error and "booking_id" in missing.content[0].text
    unknown = over_mcp(url, eid, call("launch_rocket", {}))
    assert (
        unknown.is_error
        and "launch_rocket" in unknown.content[0].text
        and "get_booking" in unknown.content[0].text
    )
    assert not [e for e in rest.episode(eid).events if e.kind == "tool_call"]  # nothing ran


def test_a_scored_episode_refuses_calls_with_a_protocol_error(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    rest.score(eid)
    refused = over_mcp(url, eid, call("get_booking", {"booking_id": "BK-20417"}))
    assert isinstance(refused, MCPError) and refused.code == types.INVALID_REQUEST
    assert refused.message.startswith("episode-finished:")


def test_gold_trajectory_over_mcp_scores_one_through_rest(url: str) -> None:
    """The runnable example: gold actions over MCP, the user told and the episode scored over REST."""
    env = {**os.environ, "GROUNDSTATE_API_KEY": KEY}
    # outside groundstate: an isolated interpreter whose imports of the project's packages fail
    run = subprocess.run(
        [sys.executable, "-I", "-c", _WITHOUT_GROUNDSTATE.format(example=str(EXAMPLE), url=url, task=TASK)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("status scored, reward 1"), run.stdout
    assert "create_approval_request(" in run.stdout and "-> ok" in run.stdout


def test_the_api_key_applies_to_mcp(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    endpoint = f"{url}/v1/episodes/{eid}/mcp"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    refused = httpx.post(endpoint, json=ping, headers={"accept": "application/json, text/event-stream"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
    with pytest.raises(ExceptionGroup) as caught:  # the SDK's client cannot even connect
        over_mcp(url, eid, call("get_booking", {"booking_id": "BK-20417"}), key="wrong-key")
    assert caught.group_contains(MCPError, depth=None)
    assert not [e for e in rest.episode(eid).events if e.kind == "tool_call"]


def _refused_on_connect(url: str, episode_id: str) -> MCPError:
    """The MCP error the SDK's client raises when the endpoint refuses it at `initialize`."""
    with pytest.raises(ExceptionGroup) as caught:  # raised while connecting, inside the client's task group
        over_mcp(url, episode_id, call("get_booking", {"booking_id": "BK-20417"}))
    matched, _ = caught.value.split(MCPError)
    assert matched is not None
    while isinstance(matched, ExceptionGroup):
        matched = matched.exceptions[0]
    assert isinstance(matched, MCPError)
    return matched


def test_an_unknown_episode_is_a_404_whose_json_rpc_error_carries_the_servers_message(url: str) -> None:
    response = httpx.post(
        f"{url}/v1/episodes/no-such-episode/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={"authorization": f"Bearer {KEY}", "accept": "application/json, text/event-stream"},
    )
    error = response.json()["error"]
    assert response.status_code == 404 and error["data"] == {"code": "unknown-episode", "field": "episode_id"}
    refused = _refused_on_connect(url, "no-such-episode")  # the SDK's own client
    assert refused.code == types.INVALID_REQUEST
    assert refused.message == "unknown-episode: unknown episode 'no-such-episode'"  # not a bare "Not Found"


def test_a_disposed_episode_says_so_over_mcp(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    rest.dispose(eid)
    refused = _refused_on_connect(url, eid)
    assert refused.message.startswith(f"episode-disposed: episode {eid} was disposed of")


def test_a_plain_get_on_the_mcp_url_answers_at_once(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    response = httpx.get(
        f"{url}/v1/episodes/{eid}/mcp", headers={"authorization": f"Bearer {KEY}"}, timeout=5
    )
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert (
        response.json()["error"]["code"] == "method-not-allowed"
        and "POST" in response.json()["error"]["message"]
    )


def test_dns_rebinding_protection_refuses_unknown_hosts(url: str, rest: GroundstateClient) -> None:
    eid = rest.start_episode(TASK).episode_id
    headers = {"authorization": f"Bearer {KEY}", "accept": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    endpoint = f"{url}/v1/episodes/{eid}/mcp"
    assert httpx.post(endpoint, json=body, headers={**headers, "host": "evil.example"}).status_code == 421
    assert (
        httpx.post(endpoint, json=body, headers={**headers, "origin": "http://evil.example"}).status_code
        == 403
    )


def test_an_mcp_1x_client_works_too(url: str, rest: GroundstateClient, openenv_python: str) -> None:
    """Agents still on mcp 1.x (the initialize handshake) reach the same tools: OpenEnv's venv has one."""
    version = subprocess.run(
        [openenv_python, "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not version.startswith("1."):
        pytest.skip(f"OpenEnv's venv has mcp {version}, not a 1.x client")
    started = rest.start_episode(TASK)
    run = subprocess.run(
        [openenv_python, str(LEGACY_CLIENT), url, started.episode_id, KEY], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["protocol"] < "2026" and seen["tools"] == [t["function"]["name"] for t in started.tools]
    assert seen["refused"][0] is True and "BK-00000" in seen["refused"][1]
    assert seen["found"] == [
        False,
        rest.call_tool(started.episode_id, "get_booking", {"booking_id": "BK-20417"}).output,
    ]
