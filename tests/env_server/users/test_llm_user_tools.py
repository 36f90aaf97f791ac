"""The LLM user's own tools (dual control) over a real OpenAI-compatible HTTP server.

The server is `tests.llm_server.edge_app`: a real HTTP endpoint answering chat completions as scripted, here
with an OpenAI tool call, so the test sees exactly what the user sends (`tools=[...]`, the tool result) and
what the episode records (a `user_tool_call` event whose call ran in the episode's sandbox).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain
from env_server.settings import Settings
from tests.live_server import serve
from tests.llm_server import EdgeScript, completion, edge_app


def tool_call_completion(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    """A chat completion whose only choice calls `name` with the raw JSON `arguments`, without text."""
    body = completion(None)
    body["choices"][0]["finish_reason"] = "tool_calls"
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    ]
    return body


def _client(tmp_path: Path, base_url: str) -> TestClient:
    settings = Settings(
        store_url=f"sqlite:///{tmp_path}/s.db",
        user_base_url=f"{base_url}/v1",
        user_model="edge",
        user_max_retries=0,
    )
    return TestClient(create_app(settings, registry=DomainRegistry([domain])))


def test_the_llm_user_calls_its_tools_and_the_call_runs_in_the_episode(tmp_path: Path) -> None:
    script = EdgeScript(
        (200, completion("Hi, my phone 0488 907 866 has no service.")),
        (200, tool_call_completion("set_airplane_mode", '{"device_id": "DV-0012", "on": false}')),
        (200, completion("I switched airplane mode off; I have signal now.")),
    )
    with serve(edge_app(script)) as url, _client(tmp_path, url) as client:
        started = client.post("/v1/episodes", json={"task_id": "telecom-airplane-001", "user": "llm"}).json()
        eid = started["episode_id"]
        reply = client.post(
            f"/v1/episodes/{eid}/messages", json={"content": "Please turn airplane mode off."}
        )
        assert reply.json() == {"content": "I switched airplane mode off; I have signal now.", "done": False}
        events = client.get(f"/v1/episodes/{eid}").json()["events"]
        score = client.post(f"/v1/episodes/{eid}/score").json()

    opening, acting, speaking = script.requests
    assert "tools" not in opening  # the opening only talks
    offered = {t["function"]["name"] for t in acting["tools"]}
    assert offered == {t.name for t in domain.user_tools}  # the customer's tools, none of the agent's
    assert "tools that act on your own devices" in acting["messages"][0]["content"]
    assert speaking["tools"] == acting["tools"]
    said_back = speaking["messages"][-2:]
    assert said_back[0]["role"] == "assistant" and said_back[0]["tool_calls"][0]["id"] == "call_1"
    assert said_back[1]["role"] == "tool" and said_back[1]["tool_call_id"] == "call_1"
    assert json.loads(said_back[1]["content"])["output"]["airplane_mode"] is False

    kinds = [e["kind"] for e in events]
    assert kinds == ["user_message", "assistant_message", "user_tool_call", "user_message"]
    acted = events[2]["payload"]
    assert acted["name"] == "set_airplane_mode" and acted["arguments"] == {
        "device_id": "DV-0012",
        "on": False,
    }
    assert acted["error"] is None
    # the state on the customer's side is the gold's: the communicate fact was told, so the episode scores 1
    assert score["reward"] == 1, score["checks"]


def test_a_bad_user_call_is_recorded_refused_and_the_model_reads_why(tmp_path: Path) -> None:
    script = EdgeScript(
        (200, completion("Hi, my phone has no service.")),
        (200, tool_call_completion("set_airplane_mode", '{"device_id": "DV-9999", "on": false}')),
        (200, tool_call_completion("reset_everything", "{}", call_id="call_2")),
        (200, tool_call_completion("set_airplane_mode", "not json", call_id="call_3")),
        (200, completion("It says there is no such phone.")),
    )
    with serve(edge_app(script)) as url, _client(tmp_path, url) as client:
        eid = client.post("/v1/episodes", json={"task_id": "telecom-airplane-001", "user": "llm"}).json()[
            "episode_id"
        ]
        client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please turn airplane mode off."})
        info = client.get(f"/v1/episodes/{eid}").json()

    user_calls = [e["payload"] for e in info["events"] if e["kind"] == "user_tool_call"]
    assert [(c["name"], c["error"] is not None) for c in user_calls] == [
        ("set_airplane_mode", True),  # a phone that is not there: the tool's refusal
        ("reset_everything", True),  # no such user tool
    ]
    assert "No phone DV-9999" in user_calls[0]["error"]
    assert "no tool 'reset_everything'" in user_calls[1]["error"]
    tool_results = [m for m in script.requests[-1]["messages"] if m["role"] == "tool"]
    errors = [json.loads(m["content"])["error"] for m in tool_results]
    assert len(errors) == 3
    assert errors[0].startswith("No phone DV-9999")
    assert errors[1].startswith("domain 'telecom' has no tool 'reset_everything'")
    assert "set_airplane_mode" in errors[1] and "run_diagnostics" not in errors[1]  # only the user's tools
    assert errors[2].startswith("the arguments are not a JSON object")
    assert info["changes"] == []  # nothing changed on either side


def test_a_user_that_keeps_calling_tools_answers_in_words_after_four_calls(tmp_path: Path) -> None:
    looping = tool_call_completion("check_phone", '{"device_id": "DV-0012"}')
    script = EdgeScript(
        (200, completion("Hi, my phone has no service.")),
        *[(200, looping)] * 4,
        (200, completion("Everything looks normal on my screen.")),
    )
    with serve(edge_app(script)) as url, _client(tmp_path, url) as client:
        eid = client.post("/v1/episodes", json={"task_id": "telecom-airplane-001", "user": "llm"}).json()[
            "episode_id"
        ]
        reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": "What does your phone show?"})
        events = client.get(f"/v1/episodes/{eid}").json()["events"]

    assert reply.json()["content"] == "Everything looks normal on my screen."
    assert [e["kind"] for e in events].count("user_tool_call") == 4
    assert ["tools" in r for r in script.requests] == [False, True, True, True, True, False]


def _guided_client(tmp_path: Path, base_url: str, **settings: Any) -> TestClient:
    values: dict[str, Any] = {
        "store_url": f"sqlite:///{tmp_path}/s.db",
        "user_base_url": f"{base_url}/v1",
        "user_model": "edge",
        "user_max_retries": 0,
        "user_tool_choice": "guided",
        **settings,
    }
    return TestClient(create_app(Settings(**values), registry=DomainRegistry([domain])))


ROUTER_ASK = "Your router is off and on firmware 4.8: restart it, then update it to 5.2."


def test_guided_the_scripts_acting_line_forces_each_of_its_tools_by_name(tmp_path: Path) -> None:
    script = EdgeScript(
        (200, completion("Hi, my home internet is down.")),
        (200, tool_call_completion("restart_router", '{"router_id": "RT-0041"}')),
        (200, tool_call_completion("update_router_firmware", '{"router_id": "RT-0041"}', call_id="c2")),
        (200, completion("Done: restarted and updated.")),
    )
    with serve(edge_app(script)) as url, _guided_client(tmp_path, url) as client:
        eid = client.post("/v1/episodes", json={"task_id": "telecom-router-004", "user": "llm"}).json()[
            "episode_id"
        ]
        reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": ROUTER_ASK}).json()
        info = client.get(f"/v1/episodes/{eid}").json()
        score = client.post(f"/v1/episodes/{eid}/score").json()

    opening, first, second, words = script.requests
    assert "tools" not in opening and "tools" not in words
    assert first["tool_choice"] == {"type": "function", "function": {"name": "restart_router"}}
    assert second["tool_choice"] == {"type": "function", "function": {"name": "update_router_firmware"}}
    assert {t["function"]["name"] for t in first["tools"]} == {t.name for t in domain.user_tools}
    properties = [p for t in first["tools"] for p in t["function"]["parameters"]["properties"].values()]
    bounds = [p["maxLength"] for p in properties if "maxLength" in p]
    assert bounds and max(bounds) == 1000  # capped for llama.cpp's grammar engine (the tools say 4000)
    assert [m["role"] for m in words["messages"][-4:]] == ["assistant", "tool", "assistant", "tool"]
    assert reply == {"content": "Done: restarted and updated.", "done": False}
    acted = [
        (e["payload"]["name"], e["payload"]["error"]) for e in info["events"] if e["kind"] == "user_tool_call"
    ]
    assert acted == [("restart_router", None), ("update_router_firmware", None)]
    assert score["reward"] == 1 and score["user_prompt_version"] == "llm-user-v6+guided"


def test_guided_a_line_not_yet_told_only_talks_and_a_skipped_forced_call_is_a_backend_error(
    tmp_path: Path,
) -> None:
    script = EdgeScript(
        (200, completion("Hi, my home internet is down.")),
        (200, completion("What should I do?")),  # told nothing: only words are asked for
        (200, completion("I'd rather talk.")),  # forced to call restart_router, the model did not
    )
    with serve(edge_app(script)) as url, _guided_client(tmp_path, url) as client:
        eid = client.post("/v1/episodes", json={"task_id": "telecom-router-004", "user": "llm"}).json()[
            "episode_id"
        ]
        vague = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please check your router."})
        assert vague.json()["content"] == "What should I do?" and "tools" not in script.requests[1]
        eid = client.post("/v1/episodes", json={"task_id": "telecom-router-004", "user": "llm"}).json()[
            "episode_id"
        ]
        refused = client.post(f"/v1/episodes/{eid}/messages", json={"content": ROUTER_ASK})
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "backend-error"
        assert (
            "tool_choice named restart_router but the reply did not call it"
            in refused.json()["error"]["message"]
        )
        assert not [
            e for e in client.get(f"/v1/episodes/{eid}").json()["events"] if e["kind"] == "user_tool_call"
        ]


def test_auto_sends_tool_choice_and_extra_fields_and_a_blank_acting_reply_is_no_call(tmp_path: Path) -> None:
    script = EdgeScript(
        (200, completion("Hi, my phone has no service.")),
        (200, completion("")),  # llama-cpp-python's chatml-function-calling when the model picks words
        (200, completion("What is airplane mode?")),
    )
    with (
        serve(edge_app(script)) as url,
        _guided_client(
            tmp_path, url, user_tool_choice="auto", user_extra_body={"repeat_penalty": 1.0}
        ) as client,
    ):
        eid = client.post("/v1/episodes", json={"task_id": "telecom-airplane-001", "user": "llm"}).json()[
            "episode_id"
        ]
        reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Turn airplane mode off."})
        events = client.get(f"/v1/episodes/{eid}").json()["events"]

    assert reply.json() == {"content": "What is airplane mode?", "done": False}
    _, acting, words = script.requests
    assert acting["tool_choice"] == "auto" and "tools" not in words and "tool_choice" not in words
    assert all(r["repeat_penalty"] == 1.0 for r in script.requests)
    assert [e["kind"] for e in events] == ["user_message", "assistant_message", "user_message"]


def test_guided_arguments_are_the_models_not_the_scripts(tmp_path: Path) -> None:
    script = EdgeScript(
        (200, completion("Hi, my home internet is down.")),
        (200, tool_call_completion("restart_router", '{"router_id": "RT-9999"}')),
        (200, tool_call_completion("update_router_firmware", '{"router_id": "RT-9999"}', call_id="c2")),
        (200, completion("It says there is no such router.")),
    )
    with serve(edge_app(script)) as url, _guided_client(tmp_path, url) as client:
        eid = client.post("/v1/episodes", json={"task_id": "telecom-router-004", "user": "llm"}).json()[
            "episode_id"
        ]
        client.post(f"/v1/episodes/{eid}/messages", json={"content": ROUTER_ASK})
        info = client.get(f"/v1/episodes/{eid}").json()
        score = client.post(f"/v1/episodes/{eid}/score").json()
    acted = [e["payload"] for e in info["events"] if e["kind"] == "user_tool_call"]
    assert [(a["arguments"], a["error"]) for a in acted] == [
        ({"router_id": "RT-9999"}, "No router RT-9999"),
        ({"router_id": "RT-9999"}, "No router RT-9999"),
    ]
    assert info["changes"] == [] and score["reward"] == 0


def test_the_llm_user_remembers_its_own_calls_in_later_turns(tmp_path: Path) -> None:
    """A later request's history holds the customer's earlier call and its result, before the words."""
    script = EdgeScript(
        (200, completion("Hi, my phone 0488 907 866 has no service.")),
        (200, tool_call_completion("set_airplane_mode", '{"device_id": "DV-0012", "on": false}')),
        (200, completion("I switched airplane mode off.")),
        (200, completion("Yes, I already did that.")),
    )
    with serve(edge_app(script)) as url, _client(tmp_path, url) as client:
        started = client.post("/v1/episodes", json={"task_id": "telecom-airplane-001", "user": "llm"}).json()
        eid = started["episode_id"]
        client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please turn airplane mode off."})
        client.post(f"/v1/episodes/{eid}/messages", json={"content": "Did you switch airplane mode off?"})

    later = script.requests[3]["messages"]
    remembered = next(i for i, m in enumerate(later) if m.get("tool_calls"))
    call, result, words = later[remembered : remembered + 3]
    assert call["role"] == "assistant" and call["content"] == ""
    assert call["tool_calls"][0]["function"]["name"] == "set_airplane_mode"
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"device_id": "DV-0012", "on": False}
    assert result == {
        "role": "tool",
        "tool_call_id": call["tool_calls"][0]["id"],
        "content": result["content"],
    }
    assert json.loads(result["content"])["output"]["airplane_mode"] is False
    assert words == {"role": "assistant", "content": "I switched airplane mode off."}
    assert later[-1] == {"role": "user", "content": "Did you switch airplane mode off?"}
