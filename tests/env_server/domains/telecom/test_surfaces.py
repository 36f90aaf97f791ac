"""Dual control through the protocol surfaces: MCP and OpenEnv play a telecom episode like REST does.

The agent's side of the reference conversation goes through each surface; the scripted customer acts on
its own side when the agent's message asks (a `user_tool_call` event), never through the surface. The
agent is never offered a user tool there, and one it calls anyway is refused with nothing run. In process
on both backends; the official MCP client and OpenEnv's own client against a real server are slow tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from env_server.domains.telecom import domain
from tests.env_server.api.conftest import openenv_python as openenv_python  # OpenEnv's client's venv
from tests.live_server import serve_process

TASK = "telecom-router-004"  # two customer actions, in order: restart the router, then update it
USER_TOOLS = {t.name for t in domain.user_tools}
ROOT = Path(__file__).parents[4]
HEADERS = {"accept": "application/json, text/event-stream"}


def _agent_steps(client: TestClient) -> list[dict[str, Any]]:
    steps = client.get(f"/v1/tasks/{TASK}/reference").json()["steps"]
    return [s for s in steps if s["role"] == "assistant"]


def _kinds(client: TestClient, eid: str) -> list[str]:
    return [e["kind"] for e in client.get(f"/v1/episodes/{eid}").json()["events"]]


def _customer_calls(client: TestClient, eid: str) -> list[tuple[str, Any, Any]]:
    events = client.get(f"/v1/episodes/{eid}").json()["events"]
    return [
        (e["payload"]["name"], e["payload"]["arguments"], e["payload"]["error"])
        for e in events
        if e["kind"] == "user_tool_call"
    ]


CUSTOMER = [
    ("restart_router", {"router_id": "RT-0041"}, None),
    ("update_router_firmware", {"router_id": "RT-0041"}, None),
]


def _rpc(client: TestClient, eid: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post(f"/v1/episodes/{eid}/mcp", json=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    return dict(response.json()["result"])


def test_mcp_lists_no_user_tool_and_the_customer_acts_on_a_rest_message(client: TestClient) -> None:
    started = client.post("/v1/episodes", json={"task_id": TASK}).json()
    eid = started["episode_id"]
    listed = [t["name"] for t in _rpc(client, eid, "tools/list", {})["tools"]]
    assert listed == [t["function"]["name"] for t in started["tools"]] and not USER_TOOLS & set(listed)
    refused = _rpc(
        client, eid, "tools/call", {"name": "restart_router", "arguments": {"router_id": "RT-0041"}}
    )
    assert refused["isError"] is True and "no tool 'restart_router'" in refused["content"][0]["text"]
    assert client.get(f"/v1/episodes/{eid}").json()["changes"] == []  # the router is untouched
    for step in _agent_steps(client):
        if step["tool_call"] is None:
            client.post(f"/v1/episodes/{eid}/messages", json={"content": step["content"]})
        else:
            result = _rpc(client, eid, "tools/call", step["tool_call"])
            assert result["isError"] is False, result
    assert _customer_calls(client, eid) == CUSTOMER
    assert "tool_call" in _kinds(client, eid)  # the MCP calls are the agent's, in the same event log
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 1 and {c["side"] for c in score["changes"]} == {"user"}, score["checks"]


def test_openenv_steps_the_agent_while_the_customer_acts_between_steps(client: TestClient) -> None:
    with client.websocket_connect("/openenv/ws") as ws:

        def step(data: dict[str, Any], kind: str = "step") -> dict[str, Any]:
            ws.send_json({"type": kind, "data": data})
            frame = ws.receive_json()
            assert frame["type"] != "error", frame
            return dict(frame["data"])

        reset = step({"task_id": TASK}, "reset")["observation"]
        eid = reset["episode_id"]
        offered = {t["function"]["name"] for t in reset["tools"]}
        assert offered and not offered & USER_TOOLS
        refused = step({"name": "restart_router", "arguments": {"router_id": "RT-0041"}})["observation"]
        assert refused["error"]["code"] == "unknown-tool"
        final: dict[str, Any] = {}
        for agent in _agent_steps(client):
            if agent["tool_call"] is None:
                final = step({"message": agent["content"]})
            else:
                final = step(agent["tool_call"])
                assert final["observation"]["tool_result"]["error"] is None
            if final["done"]:
                break
        if not final["done"]:
            final = step({"end": True})
    assert final["done"] is True and final["reward"] == 1.0, final["observation"]["score"]["checks"]
    assert _customer_calls(client, eid) == CUSTOMER
    kinds = _kinds(client, eid)
    assert kinds.count("rejected_tool_call") == 1 and kinds.count("user_tool_call") == 2


# -- the official MCP client and OpenEnv's own client, against a real server --------------------------------


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("telecom") / "store.db"
    env = {"GROUNDSTATE_STORE_URL": f"sqlite:///{store}", "GROUNDSTATE_DOMAINS": '["telecom"]'}
    with serve_process(env) as url:
        yield url


def _played(url: str, stdout: str) -> tuple[str, list[str]]:
    """The episode an example played (its first line names it) and its event kinds, read over REST."""
    episode_id = stdout.split()[1].rstrip(":;")
    info = httpx.get(f"{url}/v1/episodes/{episode_id}").json()
    calls = [e["payload"]["name"] for e in info["events"] if e["kind"] == "user_tool_call"]
    return str(info["score"]["reward"]), calls


@pytest.mark.slow
def test_the_mcp_example_plays_a_dual_control_task_to_reward_one(live_url: str) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_client.py"), "--url", live_url, "--task", TASK],
        env={k: v for k, v in os.environ.items() if k != "GROUNDSTATE_API_KEY"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("status scored, reward 1"), run.stdout
    listed = run.stdout.split("tools over MCP: ")[1].splitlines()[0].split(", ")
    assert "run_diagnostics" in listed and not USER_TOOLS & set(listed)
    assert _played(live_url, run.stdout) == ("1", ["restart_router", "update_router_firmware"])


@pytest.mark.slow
def test_openenvs_client_plays_a_dual_control_task_to_reward_one(openenv_python: str, live_url: str) -> None:
    run = subprocess.run(
        [openenv_python, str(ROOT / "examples" / "openenv_client.py"), "--url", live_url, "--task", TASK],
        env={k: v for k, v in os.environ.items() if k != "GROUNDSTATE_API_KEY"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("reward 1.0"), run.stdout
    assert "restart_router" not in run.stdout  # the agent never made the customer's calls
    assert _played(live_url, run.stdout) == ("1", ["restart_router", "update_router_firmware"])
