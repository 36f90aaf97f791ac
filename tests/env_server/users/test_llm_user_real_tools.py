"""A real model's tool calls on the customer's side: SmolLM2-135M (llama.cpp) plays a telecom customer.

The agent is scripted over HTTP; the customer is the LLM user, on a llama.cpp server whose chat format
serves OpenAI tool calling (`chatml-function-calling`). A recording proxy between the two keeps every
request and the model's answer, so the test sees the call the model wrote and the event it became.

What this model does (temperature 0): offered its tools with `tool_choice: "auto"`, it always chooses
words (and llama-cpp-python then answers a blank message, read as no call); forced by name, it writes the
router's id the agent gave it. So the user runs `guided` (`GROUNDSTATE_USER_TOOL_CHOICE=guided`): the
script decides when the customer acts and which tool, the model writes the arguments. llama.cpp's default
`repeat_penalty` (1.1) keeps the model from copying that id, hence `GROUNDSTATE_USER_EXTRA_BODY`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain
from env_server.settings import Settings
from tests.factories import call
from tests.live_server import serve
from tests.llm_server import LlamaServer, start_or_skip

pytestmark = pytest.mark.slow

TASK = "telecom-router-104"
#: The agent's diagnosis and request: "restart" is the `when_told` term of the script's acting line.
ASK = "There is no internet outage in Northgate, but your router RT-0169 is off. Please restart it."
USER_TOOLS = {t.name for t in domain.user_tools}


@pytest.fixture(scope="module")
def tool_server() -> Iterator[LlamaServer]:
    """SmolLM2 behind llama-cpp-python's OpenAI tool-calling chat format (its own model load)."""
    yield from start_or_skip(chat_format="chatml-function-calling")


class Exchange:
    """What the proxy forwarded: each request body and the model's answer, in order."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []


def recording_proxy(target: str, seen: Exchange) -> FastAPI:
    """An app forwarding `POST /v1/chat/completions` to `target` (an API root) and recording both ways."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        seen.requests.append(body)
        async with httpx.AsyncClient(timeout=120) as http:
            answer = await http.post(f"{target}/chat/completions", json=body)
        seen.answers.append(answer.json())
        return JSONResponse(answer.json(), status_code=answer.status_code)

    return app


@pytest.fixture
def proxied(tmp_path: Path, tool_server: LlamaServer) -> Iterator[tuple[Exchange, Settings]]:
    """The settings of an LLM user reaching the model through a recording proxy (guided, temperature 0)."""
    seen = Exchange()
    with serve(recording_proxy(tool_server.base_url, seen)) as url:
        yield (
            seen,
            Settings(
                store_url=f"sqlite:///{tmp_path}/store.db",
                user_base_url=f"{url}/v1",
                user_model=tool_server.model,
                user_temperature=0.0,
                user_seed=0,
                user_max_tokens=32,
                user_timeout_s=60.0,
                user_tool_choice="guided",
                user_extra_body={"repeat_penalty": 1.0},
            ),
        )


def _play(settings: Settings, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start the task with the LLM user, make the agent's gold calls, say `message`, score."""
    with TestClient(create_app(settings, registry=DomainRegistry([domain]))) as client:
        started = client.post("/v1/episodes", json={"task_id": TASK, "user": "llm", "seed": 0})
        assert started.status_code == 201, started.text
        eid = started.json()["episode_id"]
        assert started.json()["first_message"].strip()  # the model's own opening line
        call(client, eid, "find_customer", number="0489766489")
        call(client, eid, "check_outages", area="Northgate")
        call(client, eid, "run_diagnostics", line_id="LN-1169")
        reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": message})
        assert reply.status_code == 200, reply.text
        assert reply.json()["content"].strip()  # the customer says something after acting
        info = client.get(f"/v1/episodes/{eid}").json()
        return info, client.post(f"/v1/episodes/{eid}/score").json()


def test_the_models_own_call_restarts_the_customers_router(proxied: tuple[Exchange, Settings]) -> None:
    seen, settings = proxied
    info, score = _play(settings, ASK)

    # the one request that forced the call: the customer's tools only, bounded for llama.cpp's grammar
    [forced] = [i for i, r in enumerate(seen.requests) if "tool_choice" in r]
    request = seen.requests[forced]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "restart_router"}}
    assert {t["function"]["name"] for t in request["tools"]} == USER_TOOLS
    assert request["repeat_penalty"] == 1.0 and request["temperature"] == 0.0
    [written] = seen.answers[forced]["choices"][0]["message"]["tool_calls"]
    assert written["function"]["name"] == "restart_router"
    # what the model wrote is what ran in the episode's sandbox, recorded as the customer's call
    [acted] = [e["payload"] for e in info["events"] if e["kind"] == "user_tool_call"]
    assert acted["name"] == "restart_router" and acted["error"] is None
    assert acted["arguments"] == json.loads(written["function"]["arguments"]) == {"router_id": "RT-0169"}
    assert acted["output"]["power"] == "on"
    # the call's result went back as a `tool` message, and the words came from a request without tools
    assert seen.requests[forced + 1]["messages"][-1]["role"] == "tool"
    assert "tools" not in seen.requests[forced + 1]
    assert [(c["table"], c["column"], c["after"], c["side"]) for c in info["changes"]] == [
        ("routers", "power", "on", "user"),
        ("routers", "restarts", 1, "user"),
    ]
    assert score["reward"] == 1 and score["diff"] == [], score["checks"]
    assert score["user_prompt_version"] == "llm-user-v6+guided"


def test_a_customer_not_asked_to_restart_makes_no_call(proxied: tuple[Exchange, Settings]) -> None:
    seen, settings = proxied
    info, score = _play(settings, "There is no internet outage in Northgate. Is anything else wrong?")
    assert not any("tools" in r for r in seen.requests)  # the script's line waits for "restart"
    assert [e for e in info["events"] if e["kind"] == "user_tool_call"] == [] and info["changes"] == []
    assert score["reward"] == 0


def test_offered_its_tools_with_auto_the_model_chooses_words(proxied: tuple[Exchange, Settings]) -> None:
    """The finding behind `guided`: `auto` reaches the server, and this model never calls under it."""
    seen, settings = proxied
    info, _ = _play(settings.model_copy(update={"user_tool_choice": "auto"}), ASK)
    acting = [r for r in seen.requests if "tools" in r]
    assert acting and all(r["tool_choice"] == "auto" for r in acting)
    assert {t["function"]["name"] for t in acting[0]["tools"]} == USER_TOOLS
    answered = seen.answers[seen.requests.index(acting[0])]["choices"][0]["message"]
    assert not answered.get("tool_calls") and not answered["content"]  # llama-cpp-python's blank "message"
    assert "tools" not in seen.requests[-1]  # so the words were asked for without tools: no backend error
    assert [e for e in info["events"] if e["kind"] == "user_tool_call"] == []
