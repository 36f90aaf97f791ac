"""The OpenEnv surface: its WebSocket protocol through the app (both backends), and OpenEnv's own client.

OpenEnv's client (`openenv` from PyPI) pins an older `mcp` than the server, so it lives in a virtual
environment of its own (`make openenv-client`, `GROUNDSTATE_OPENENV_PYTHON`); the slow tests run
`examples/openenv_client.py` with that interpreter against a real `groundstate serve` process.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.live_server import free_port, serve_process

ROOT = Path(__file__).parents[3]
EXAMPLE = ROOT / "examples" / "openenv_client.py"
TOY_TASK = "toybank-transfer-001"
GOLD = [
    {"name": "get_account", "arguments": {"account_id": "AC-0001"}},
    {"name": "transfer", "arguments": {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}},
]


class Session:
    """A raw OpenEnv WebSocket session: one frame out, one frame back."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    def send(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ws.send_json({"type": kind, "data": data or {}})
        return self.ws.receive_json()  # type: ignore[no-any-return]

    def data(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        frame = self.send(kind, data)
        assert frame["type"] != "error", frame
        return frame["data"]  # type: ignore[no-any-return]


@pytest.fixture
def session(client: TestClient) -> Iterator[Session]:
    with client.websocket_connect("/openenv/ws") as ws:
        yield Session(ws)


def test_gold_trajectory_gets_reward_one_on_the_final_step(client: TestClient, session: Session) -> None:
    reset = session.data("reset", {"task_id": TOY_TASK})
    obs = reset["observation"]
    assert reset["done"] is False and reset["reward"] is None
    assert obs["user_message"] == "Please move 50.00 from AC-0001 to AC-0002."
    assert (
        "transfer" in {t["function"]["name"] for t in obs["tools"]}
        and "Toy bank policy" in obs["system_prompt"]
    )
    steps = [session.data("step", action) for action in GOLD]
    assert steps[0]["observation"]["tool_result"]["output"]["balance_cents"] == 10000
    assert steps[1]["observation"]["tool_result"]["output"] == "TR-90001"
    assert all(s["reward"] is None and not s["done"] for s in steps)
    reply = session.data("step", {"message": "Your transfer complete!"})
    assert reply["observation"]["user_message"] == "Thanks!" and not reply["done"]
    final = session.data("step", {"end": True})
    assert final["done"] is True and final["reward"] == 1.0
    assert final["observation"]["score"]["status"] == "scored" and final["observation"]["score"]["diff"] == []
    state = session.data("state")
    assert state == {
        "episode_id": obs["episode_id"],
        "step_count": 4,
        "task_id": TOY_TASK,
        "domain": "toybank",
        "done": True,
        "reward": 1.0,
    }
    events = client.get(f"/v1/episodes/{obs['episode_id']}").json()["events"]  # the same event log as REST
    assert [e["kind"] for e in events] == [
        "user_message",
        "tool_call",
        "tool_call",
        "assistant_message",
        "user_message",
    ]
    assert client.post(f"/v1/episodes/{obs['episode_id']}/score").json()["reward"] == 1


def test_a_wrong_trajectory_gets_reward_zero(session: Session) -> None:
    session.data("reset", {"task_id": TOY_TASK})
    session.data(
        "step",
        {
            "tool": "transfer",  # the deprecated spelling of `name` is still read
            "arguments": {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 4000},
        },
    )
    final = session.data("step", {"end": True})
    assert final["done"] and final["reward"] == 0.0
    assert {d["kind"] for d in final["observation"]["score"]["diff"]} == {"wrong"}


def test_the_agents_mistakes_come_back_in_the_observation(client: TestClient, session: Session) -> None:
    eid = session.data("reset", {"task_id": TOY_TASK})["observation"]["episode_id"]
    unknown = session.data("step", {"name": "launch_rocket"})["observation"]
    assert unknown["error"]["code"] == "unknown-tool" and "transfer" in unknown["error"]["message"]
    invalid = session.data("step", {"name": "get_account", "arguments": {}})["observation"]
    assert (
        invalid["error"]["code"] == "invalid-arguments"
        and invalid["error"]["field"] == "arguments.account_id"
    )
    empty = session.data("step", {"message": ""})["observation"]
    assert empty["error"]["field"] == "message"
    refused = session.data("step", {"name": "get_account", "arguments": {"account_id": "AC-9999"}})[
        "observation"
    ]
    assert refused["error"] is None and "AC-9999" in refused["tool_result"]["error"]  # a business refusal
    assert [e["kind"] for e in client.get(f"/v1/episodes/{eid}").json()["events"]] == [
        "user_message",
        "rejected_tool_call",  # the step counted, and the episode's record shows it
        "rejected_tool_call",
        "tool_call",
    ]


def test_protocol_errors_are_error_frames(session: Session) -> None:
    def code(kind: str, data: dict[str, Any] | None = None) -> tuple[str, str]:
        frame = session.send(kind, data)
        assert frame["type"] == "error"
        return frame["data"]["code"], frame["data"]["message"]

    assert code("step", {"end": True})[0] == "SESSION_ERROR"  # no episode yet
    assert code("reset", {})[0] == "VALIDATION_ERROR"
    unknown_task = session.send("reset", {"task_id": "no-such-task"})["data"]
    assert unknown_task["code"] == "EXECUTION_ERROR" and unknown_task["error"]["code"] == "unknown-task"
    assert unknown_task["retriable"] is False
    assert code("launch")[0] == "UNKNOWN_TYPE"
    session.data("reset", {"task_id": TOY_TASK})
    kind, message = code("step", {"name": "get_account", "message": "hello"})
    assert kind == "VALIDATION_ERROR" and "exactly one of a tool call (name), a message or end" in message
    kind, message = code("step", {"name": "get_account", "tool": "get_account"})
    assert kind == "VALIDATION_ERROR" and "not both" in message
    session.ws.send_text("{not json")
    assert session.ws.receive_json()["data"]["code"] == "INVALID_JSON"
    huge = session.send("step", {"message": "x" * (4 * 2**20)})["data"]  # over GROUNDSTATE_MAX_REQUEST_BYTES
    assert huge["code"] == "VALIDATION_ERROR" and huge["error"]["code"] == "request-too-large"
    session.data("step", {"end": True})
    assert code("step", {"end": True})[0] == "SESSION_ERROR"  # done: reset first


def test_close_and_disconnect_dispose_of_unfinished_episodes(client: TestClient) -> None:
    with client.websocket_connect("/openenv/ws") as ws:
        first = Session(ws).data("reset", {"task_id": TOY_TASK})["observation"]["episode_id"]
        second = Session(ws).data("reset", {"task_id": TOY_TASK})["observation"]["episode_id"]
        assert client.get(f"/v1/episodes/{first}").json()["status"] == "disposed"  # a new reset replaced it
        ws.send_json({"type": "close"})
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()
    assert client.get(f"/v1/episodes/{second}").json()["status"] == "disposed"
    with client.websocket_connect("/openenv/ws") as ws:
        dropped = Session(ws).data("reset", {"task_id": TOY_TASK})["observation"]["episode_id"]
    assert client.get(f"/v1/episodes/{dropped}").json()["status"] == "disposed"


def test_health_schema_and_metadata(client: TestClient) -> None:
    assert client.get("/openenv/health").json() == {"status": "healthy"}
    assert client.get("/openenv/metadata").json()["name"] == "groundstate"
    schema = client.get("/openenv/schema").json()
    assert {"name", "arguments", "message", "end"} <= set(schema["action"]["properties"])
    assert {"episode_id", "tool_result", "score"} <= set(schema["observation"]["properties"])
    assert {"episode_id", "step_count"} <= set(schema["state"]["properties"])


def test_the_api_key_applies_to_the_websocket(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", api_key="s3cret")
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        with pytest.raises(WebSocketDenialResponse) as refused, client.websocket_connect("/openenv/ws"):
            pass
        assert refused.value.status_code == 401
        assert client.get("/openenv/health").status_code == 200  # open, like /healthz
        assert client.get("/openenv/schema").status_code == 401
        headers = {"authorization": "Bearer s3cret"}
        with client.websocket_connect("/openenv/ws", headers=headers) as ws:
            assert Session(ws).data("reset", {"task_id": TOY_TASK})["observation"]["domain"] == "toybank"


# -- OpenEnv's own client, from its own virtual environment -------------------------------------------------


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("openenv") / "store.db"
    env = {
        "GROUNDSTATE_STORE_URL": f"sqlite:///{store}",
        "GROUNDSTATE_DOMAINS": '["hotel"]',
        "GROUNDSTATE_API_KEY": "openenv-key",
    }
    with serve_process(env) as url:
        yield url


@pytest.mark.slow
def test_openenv_client_plays_a_gold_trajectory_to_reward_one(openenv_python: str, live_url: str) -> None:
    env = {**os.environ, "GROUNDSTATE_API_KEY": "openenv-key"}
    run = subprocess.run(
        [openenv_python, str(EXAMPLE), "--url", live_url], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("reward 1.0"), run.stdout
    assert "create_approval_request -> ok" in run.stdout
    episode_id = run.stdout.split()[1].rstrip(":")
    info = httpx.get(f"{live_url}/v1/episodes/{episode_id}", headers={"authorization": "Bearer openenv-key"})
    assert info.json()["score"]["reward"] == 1  # the same episode, scored once, readable over REST


@pytest.mark.slow
def test_openenv_client_without_the_key_is_refused(openenv_python: str, live_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GROUNDSTATE_API_KEY"}
    probe = (
        "import sys\nfrom openenv import GenericEnvClient\n"
        "try:\n    GenericEnvClient(base_url=sys.argv[1]).sync().reset(task_id='x')\n"
        "except ConnectionError as exc:\n    print('refused', exc)\n"
    )
    run = subprocess.run(
        [openenv_python, "-c", probe, f"{live_url}/openenv"], env=env, capture_output=True, text=True
    )
    assert run.stdout.startswith("refused") and "401" in run.stdout, run.stdout + run.stderr


def test_backend_failures_are_retriable_error_frames_or_a_null_reward(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"  # nobody listens: the LLM user's and the judge's endpoint
    settings = Settings(
        store_url=f"sqlite:///{tmp_path}/store.db",
        user_base_url=down,
        user_model="m",
        user_timeout_s=2.0,
        judge_base_url=down,
        judge_model="m",
        judge_timeout_s=2.0,
        judge_max_retries=0,
    )
    with (
        TestClient(create_app(settings, registry=toy_registry)) as client,
        client.websocket_connect("/openenv/ws") as ws,
    ):
        session = Session(ws)
        failed = session.send("reset", {"task_id": TOY_TASK, "user": "llm"})  # the LLM user's opening fails
        assert failed["type"] == "error" and failed["data"]["code"] == "EXECUTION_ERROR"
        assert failed["data"]["error"]["code"] == "backend-error" and failed["data"]["retriable"] is True
        session.data("reset", {"task_id": "toybank-judge-003"})  # scripted user; the rubric judge is down
        session.data("step", {"message": "I have updated the balance."})  # something for the judge to judge
        final = session.data("step", {"end": True})
    assert final["done"] is True and final["reward"] is None  # never a 0 charged to the agent
    assert final["observation"]["score"]["status"] == "backend_error"
