"""Dual control end to end on the telecom domain: the customer acts on their side, the agent never can.

Real episodes through the HTTP API (scripted user), the reward, the diff's sides, replay after the fact, the
viewer, and the validation that proves a dual-control task needs the customer's actions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.domain import load_task_text
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain
from env_server.episodes.user_side import EpisodeUserSide
from env_server.errors import TaskInvalidError
from env_server.execution import user_tools
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.users.scripted import NOT_TOLD, ONE_AT_A_TIME
from env_server.validation import validate_task
from shared.tasks import ScriptLine
from tests.factories import call, make_client

TASK = "telecom-airplane-001"
REPLY = "Your phone is in airplane mode, so it cannot reach our network; turn airplane mode off."
USER_TOOLS = {t.name for t in domain.user_tools}
TASKS = Path(__file__).parents[4] / "env_server" / "domains" / "telecom" / "tasks"


def _start(client: TestClient, task_id: str = TASK) -> dict[str, Any]:
    started = client.post("/v1/episodes", json={"task_id": task_id})
    assert started.status_code == 201, started.text[:300]
    return dict(started.json())


def _events(client: TestClient, eid: str, kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in client.get(f"/v1/episodes/{eid}").json()["events"] if e["kind"] == kind]


def test_the_agent_is_never_offered_a_user_tool_and_calling_one_is_rejected(client: TestClient) -> None:
    started = _start(client)
    offered = {t["function"]["name"] for t in started["tools"]}
    assert offered and not offered & USER_TOOLS
    assert "run_diagnostics" in offered
    eid = started["episode_id"]
    r = client.post(
        f"/v1/episodes/{eid}/tool_calls",
        json={"name": "set_airplane_mode", "arguments": {"device_id": "DV-0012", "on": False}},
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "unknown-tool"
    assert "set_airplane_mode" not in r.json()["error"]["message"].split("(tools:")[1]
    assert [e["name"] for e in _events(client, eid, "rejected_tool_call")] == ["set_airplane_mode"]
    assert client.get(f"/v1/episodes/{eid}").json()["changes"] == []  # the phone is untouched


def test_the_customer_acts_when_asked_and_both_sides_score(client: TestClient) -> None:
    eid = _start(client)["episode_id"]
    call(client, eid, "find_customer", number="0488907866")
    diagnosis = call(client, eid, "run_diagnostics", line_id="LN-0012")["output"]
    assert not diagnosis["working"] and "airplane mode" in diagnosis["findings"][0]
    # before the customer acts, the expected change is missing, on the customer's side
    missing = client.get(f"/v1/episodes/{eid}").json()["diff"]
    assert [(d["kind"], d["table"], d["column"], d["side"]) for d in missing] == [
        ("missing", "devices", "airplane_mode", "user")
    ]
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": REPLY}).json()
    assert reply["content"].startswith("Oh, you're right") and not reply["done"]
    [acted] = _events(client, eid, "user_tool_call")
    assert acted["name"] == "set_airplane_mode" and acted["arguments"] == {
        "device_id": "DV-0012",
        "on": False,
    }
    assert acted["error"] is None and acted["output"]["airplane_mode"] is False
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 1 and score["diff"] == []
    assert [(c["table"], c["column"], c["after"], c["side"]) for c in score["changes"]] == [
        ("devices", "airplane_mode", False, "user")
    ]


def test_without_the_customers_action_the_agent_side_alone_scores_zero(client: TestClient) -> None:
    eid = _start(client)["episode_id"]
    call(client, eid, "find_customer", number="0488907866")
    call(client, eid, "run_diagnostics", line_id="LN-0012")
    score = client.post(f"/v1/episodes/{eid}/score").json()  # the agent never asked: nobody acted
    assert score["reward"] == 0
    assert {(d["table"], d["side"]) for d in score["diff"]} == {("devices", "user")}
    deviation = score["credit"]["first_deviation"]
    assert deviation["kind"] == "missing" and "only the customer can make it" in deviation["reason"]


def test_a_rescore_replays_the_customers_calls_in_their_place(client: TestClient) -> None:
    eid = _start(client, "telecom-router-004")["episode_id"]
    call(client, eid, "find_customer", number="0418586141")
    call(client, eid, "check_outages", area="Old Town")
    call(client, eid, "run_diagnostics", line_id="LN-1041")
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Restart the router, then update to 5.2."})
    assert [e["name"] for e in _events(client, eid, "user_tool_call")] == [
        "restart_router",
        "update_router_firmware",  # refused were the router still off: the order matters, and held
    ]
    assert client.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1
    service = client.app.state.episodes  # type: ignore[attr-defined]
    again, notes = service.rescore(eid)
    assert again.reward == 1 and notes == []


def test_the_viewer_shows_the_customers_calls_and_sides(client: TestClient) -> None:
    eid = _start(client)["episode_id"]
    client.post(f"/v1/episodes/{eid}/messages", json={"content": REPLY})
    page = client.get(f"/ui/episodes/{eid}")
    assert page.status_code == 200
    assert 'class="tool-call user-side' in page.text and "set_airplane_mode" in page.text
    assert 'data-side="user"' in page.text


def test_validation_proves_the_task_needs_the_customer() -> None:
    scorer = Scorer(make_sandbox_engine("sqlite://"))
    task = domain.tasks[[t.id for t in domain.tasks].index("telecom-data-apn-002")]
    report = validate_task(task, domain, scorer)
    checks = {c.name: c for c in report.checks}
    assert report.passed, [c for c in report.checks if not c.passed]
    assert checks["minus-one-user-action"].detail == "each of 2 customer actions needed"
    assert checks["hack:agent-plays-user"].detail == "scores 0"
    # the script forgets the APN: it no longer makes the gold's calls, and validation says so
    script = list(task.user.script)
    line = script[1]
    assert isinstance(line, ScriptLine)
    script[1] = line.model_copy(update={"actions": line.actions[:1]})
    broken = task.model_copy(update={"user": task.user.model_copy(update={"script": script})})
    failed = {c.name: c.detail for c in validate_task(broken, domain, scorer).checks if not c.passed}
    assert "user-actions" in failed and "set_apn" in failed["user-actions"]


def test_a_malformed_script_action_is_an_error_naming_the_field() -> None:
    text = (TASKS / f"{TASK}.yaml").read_text()
    bad = text.replace("  - name: set_airplane_mode\n", "  - nme: set_airplane_mode\n", 1)
    assert bad != text
    with pytest.raises(TaskInvalidError) as caught:
        load_task_text(bad, source=f"{TASK}.yaml")
    assert caught.value.field == "user.script.1.actions.0.name"
    assert "field 'user.script.1.actions.0.name': Field required" in str(caught.value)
    opening = text.replace(
        "  - Hi, my phone",
        "  - say: Hi\n"
        "    actions: [{name: set_airplane_mode, arguments: {device_id: DV-0012, 'on': false}}]\n"
        "  - Hi, my phone",
        1,
    )
    with pytest.raises(TaskInvalidError, match="opening line only talks"):
        load_task_text(opening, source=f"{TASK}.yaml")


def test_no_customer_call_becomes_a_backend_error(client: TestClient) -> None:
    """The LLM user's arguments are model output too: every odd value is the call's error, never a crash."""
    eid = _start(client)["episode_id"]
    service = client.app.state.episodes  # type: ignore[attr-defined]
    record = service.store.episode(eid)
    task = service.registry.task(record.task_id)
    side = EpisodeUserSide(
        eid, user_tools(domain), service.store, lambda: service._sandbox(record, task, domain)
    )
    odd: list[Any] = [
        "",
        "DV-0012",
        "RT-0041",
        "x" * 5000,
        "'; DROP TABLE devices; --",
        "nul\x00",
        2**63,
        None,
    ]
    outcomes = []
    for tool in domain.user_tools:
        fields = list(tool.args_model.model_fields)
        for value in odd:
            arguments = {f: value for f in fields}
            result = side.act(tool.name, arguments)
            outcomes.append(result.error is None)
            if "apn" in fields or "on" in fields:
                result = side.act(tool.name, {**arguments, "device_id": "DV-0012"})
                outcomes.append(result.error is None)
    assert any(outcomes) and not all(outcomes)  # some ran, most were refused: none raised
    assert client.get(f"/v1/episodes/{eid}").json()["status"] == "active"
    recorded = _events(client, eid, "user_tool_call")
    assert len(recorded) == len(outcomes) and all("\x00" not in str(e) for e in recorded)


def _pasted(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": s["role"], "content": s["content"]}
        if s["tool_call"] is None
        else {"role": "assistant", "tool_calls": [{"id": f"c{i}", "function": s["tool_call"]}]}
        for i, s in enumerate(steps)
    ]


def test_every_reference_conversation_scores_one_through_score(client: TestClient) -> None:
    """`/v1/score` replays the customer's calls where the transcript says their acting lines."""
    for task in domain.tasks:
        steps = client.get(f"/v1/tasks/{task.id}/reference").json()["steps"]
        assert all(s["tool_call"] is None or s["tool_call"]["name"] not in USER_TOOLS for s in steps)
        r = client.post("/v1/score", json={"task_id": task.id, "messages": _pasted(steps)})
        assert r.status_code == 200, r.text
        assert r.json()["reward"] == 1, (task.id, r.json()["checks"])


def test_the_scripted_customers_words_on_the_wire_are_said_again_not_read(client: TestClient) -> None:
    """Wire = live: the customer acts where the agent asked, whatever the transcript's user turns say."""
    steps = client.get(f"/v1/tasks/{TASK}/reference").json()["steps"]
    acting = domain.tasks[[t.id for t in domain.tasks].index(TASK)].user.lines[1]
    changed = [{**s, "content": "I did nothing."} if s["content"] == acting else s for s in steps]
    assert changed != steps
    score = client.post("/v1/score", json={"task_id": TASK, "messages": _pasted(changed)}).json()
    assert score["reward"] == 1, score["checks"]
    # the agent never asks for the fix, though the acting line is pasted after its message: nothing happens
    ask = next(i for i, s in enumerate(steps) if s["content"] == acting) - 1
    while steps[ask]["content"] is None:
        ask -= 1
    unasked = [{**s, "content": "Thank you."} if i == ask else s for i, s in enumerate(steps)]
    score = client.post("/v1/score", json={"task_id": TASK, "messages": _pasted(unasked)}).json()
    assert score["reward"] == 0
    assert [(d["table"], d["side"]) for d in score["diff"]] == [("devices", "user")]
    assert [r["name"] for r in score["tool_results"]] == ["find_customer", "run_diagnostics"]


def _with_own_calls(steps: list[dict[str, Any]], task_id: str) -> list[dict[str, Any]]:
    """The reference transcript as an LLM customer would leave it: other words, the calls on its turn."""
    task = next(t for t in domain.tasks if t.id == task_id)
    acting = task.user.lines[1]
    calls = [
        {"id": f"u{k}", "function": {"name": a.name, "arguments": a.arguments}}
        for k, a in enumerate(task.user.actions_at(1))
    ]
    said = {"role": "user", "content": "Right, I've changed it like you said.", "tool_calls": calls}
    return [said if s.get("content") == acting else s for s in _pasted(steps)]


def test_a_customer_turn_may_carry_its_own_calls_through_score(client: TestClient) -> None:
    """An evaluator's own simulated customer: its calls ride on its user turn and run in their place."""
    steps = client.get(f"/v1/tasks/{TASK}/reference").json()["steps"]
    messages = _with_own_calls(steps, TASK)
    score = client.post("/v1/score", json={"task_id": TASK, "messages": messages}).json()
    assert score["reward"] == 1, score["checks"]
    assert [r["name"] for r in score["tool_results"]] == ["find_customer", "run_diagnostics"]
    no_calls = [{k: v for k, v in m.items() if k != "tool_calls"} for m in messages]
    mute = {"task_id": TASK, "messages": no_calls, "customer": "own"}
    assert client.post("/v1/score", json=mute).json()["reward"] == 0
    # its call counts only where the agent asked for it: moved to the opening turn, it is not replayed
    turn = next(i for i, m in enumerate(messages) if m["role"] == "user" and m.get("tool_calls"))
    early = [
        {**m, "tool_calls": messages[turn]["tool_calls"]} if i == 0 else no_calls[i] if i == turn else m
        for i, m in enumerate(messages)
    ]
    assert client.post("/v1/score", json={"task_id": TASK, "messages": early}).json()["reward"] == 0


def test_a_customer_turn_cannot_call_an_agent_tool_or_a_tool_nobody_has(client: TestClient) -> None:
    steps = client.get(f"/v1/tasks/{TASK}/reference").json()["steps"]
    messages = _with_own_calls(steps, TASK)
    turn = next(i for i, m in enumerate(messages) if m["role"] == "user" and m.get("tool_calls"))
    for name in ("open_ticket", "drop_table"):
        bad = [dict(m) for m in messages]
        bad[turn] = {**bad[turn], "tool_calls": [{"id": "u0", "function": {"name": name, "arguments": {}}}]}
        r = client.post("/v1/score", json={"task_id": TASK, "messages": bad})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["field"] == f"messages[{turn}].tool_calls[0].function.name"
    tool_turn = [{"role": "tool", "content": "{}", "tool_calls": messages[turn]["tool_calls"]}]
    r = client.post("/v1/score", json={"task_id": TASK, "messages": tool_turn})
    assert r.status_code == 422 and "tool_calls" in r.text


def test_an_agent_turn_calling_a_user_tool_through_score_is_the_agents_error(client: TestClient) -> None:
    """The agent cannot act on the customer's side by putting the customer's call in its own turn."""
    steps = client.get(f"/v1/tasks/{TASK}/reference").json()["steps"]
    messages = _with_own_calls(steps, TASK)
    turn = next(i for i, m in enumerate(messages) if m["role"] == "user" and m.get("tool_calls"))
    hijacked = [*messages[:turn], {"role": "assistant", "tool_calls": messages[turn]["tool_calls"]}]
    hijacked += [{**messages[turn], "tool_calls": None}, *messages[turn + 1 :]]
    # the evaluator's own customer, who did nothing: the agent's call of the customer's tool is refused
    own = {"task_id": TASK, "messages": hijacked, "customer": "own"}
    score = client.post("/v1/score", json=own).json()
    assert score["reward"] == 0
    assert any(r["name"] in USER_TOOLS and r["error"] for r in score["tool_results"])


def test_an_evicted_sandbox_is_rebuilt_with_the_customers_changes(tmp_path: Path) -> None:
    """Replay after eviction runs the customer's recorded calls in their place, so both sides come back."""
    with make_client(tmp_path, "sqlite://", DomainRegistry([domain]), max_live_sandboxes=1) as client:
        service = client.app.state.episodes  # type: ignore[attr-defined]
        eid = _start(client)["episode_id"]
        call(client, eid, "find_customer", number="0488907866")
        client.post(f"/v1/episodes/{eid}/messages", json={"content": REPLY})
        _start(client)  # takes the only live slot
        assert service._live.get(eid) is None
        diagnosis = call(client, eid, "run_diagnostics", line_id="LN-0012")["output"]
        assert diagnosis["working"] is True  # the rebuilt sandbox holds the customer's airplane mode off
        assert client.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1


def test_every_reference_conversation_played_live_scores_one(client: TestClient) -> None:
    """The agent's side of each reference, played in a live episode: the scripted customer does the rest."""
    for task in domain.tasks:
        eid = _start(client, task.id)["episode_id"]
        for step in client.get(f"/v1/tasks/{task.id}/reference").json()["steps"]:
            if step["role"] == "user":
                continue
            if step["tool_call"] is not None:
                assert (
                    client.post(f"/v1/episodes/{eid}/tool_calls", json=step["tool_call"]).status_code == 200
                )
            else:
                client.post(f"/v1/episodes/{eid}/messages", json={"content": step["content"]})
        acted = [e["name"] for e in _events(client, eid, "user_tool_call")]
        assert acted == [a.name for a in task.user.user_actions()], task.id
        score = client.post(f"/v1/episodes/{eid}/score").json()
        assert score["reward"] == 1, (task.id, score["checks"])


def _play_with_spray(client: TestClient, task_id: str, spray: str) -> tuple[str, dict[str, Any]]:
    """The reference's agent side, live, with `spray` added to the reference reply; the episode's score."""
    task = next(t for t in domain.tasks if t.id == task_id)
    assert task.reference_reply is not None
    eid = _start(client, task_id)["episode_id"]
    for step in client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]:
        if step["role"] == "user":
            continue
        if step["tool_call"] is not None:
            client.post(f"/v1/episodes/{eid}/tool_calls", json=step["tool_call"])
        else:
            said = step["content"]
            client.post(f"/v1/episodes/{eid}/messages", json={"content": said})
            if said == task.reference_reply.text and spray:  # one fix per message: the spray on its own
                client.post(f"/v1/episodes/{eid}/messages", json={"content": spray})
    return eid, client.post(f"/v1/episodes/{eid}/score").json()


def test_a_message_naming_several_fixes_gets_none_done(client: TestClient) -> None:
    """An instruction spray: the customer asks for one thing at a time and acts on none."""
    task = next(t for t in domain.tasks if t.id == TASK)
    eid = _start(client)["episode_id"]
    call(client, eid, "find_customer", number="0488907866")
    said = f"{REPLY} Also restart your router, switch data roaming on and set the APN to gsnet4g."
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": said}).json()
    assert reply["content"] == ONE_AT_A_TIME
    assert _events(client, eid, "user_tool_call") == []
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": REPLY}).json()
    assert reply["content"] == task.user.lines[1]  # one fix, one message: done
    assert [e["name"] for e in _events(client, eid, "user_tool_call")] == ["set_airplane_mode"]


@pytest.mark.parametrize(
    ("task_id", "spray", "call", "table"),
    [  # an internet outage: no troubleshooting; a phone fault: no roaming switched on at home
        ("telecom-outage-005", "Please also restart your router.", "restart_router", "routers"),
        ("telecom-airplane-001", "Also switch data roaming on.", "set_data_roaming", "devices"),
    ],
)
def test_a_fix_the_agent_sprays_is_done_by_the_customer_and_costs_the_reward(
    client: TestClient, task_id: str, spray: str, call: str, table: str
) -> None:
    """Told a fix that was not needed, the customer does it (`user_instructions`): spraying fixes fails."""
    eid, score = _play_with_spray(client, task_id, spray)
    assert call in [e["name"] for e in _events(client, eid, "user_tool_call")]
    assert score["reward"] == 0
    assert (table, "user") in [(d["table"], d["side"]) for d in score["diff"]]
    _, honest = _play_with_spray(client, task_id, "")
    assert honest["reward"] == 1


def test_score_replays_the_instructions_the_scripted_customer_followed(client: TestClient) -> None:
    """`/v1/score` of a transcript with the scripted customer's lines runs what it did when told."""
    task = next(t for t in domain.tasks if t.id == "telecom-outage-005")
    assert task.reference_reply is not None
    steps = client.get(f"/v1/tasks/{task.id}/reference").json()["steps"]
    sprayed = [
        m
        for s in steps
        for m in (
            [s, {**s, "content": "Please restart your router."}]
            if s["content"] == task.reference_reply.text
            else [s]
        )
    ]
    score = client.post("/v1/score", json={"task_id": task.id, "messages": _pasted(sprayed)}).json()
    assert score["reward"] == 0
    assert [(d["table"], d["side"]) for d in score["diff"]] == [("routers", "user")]


def test_an_instruction_is_followed_once_and_not_when_the_script_makes_the_call() -> None:
    from env_server.users.scripted import instructed_calls

    outage = next(t for t in domain.tasks if t.id == "telecom-outage-005")
    router = next(t for t in domain.tasks if t.id == "telecom-router-004")
    said = "Please restart your router."
    (restart,) = instructed_calls(outage, domain.user_instructions, said, [])
    assert restart.name == "restart_router" and restart.actor == "user"
    assert restart.arguments == {"router_id": outage.user.known_info["router_id"]}
    assert instructed_calls(outage, domain.user_instructions, said, ["Restart the router, please."]) == []
    assert instructed_calls(router, domain.user_instructions, said, []) == []  # its script restarts it
    assert instructed_calls(outage, domain.user_instructions, "Restart your phone.", []) == []


def test_a_customer_not_told_what_to_change_does_nothing_and_asks(client: TestClient) -> None:
    """The airplane line waits for "airplane": an agent that only talks around it gets no action."""
    eid = _start(client)["episode_id"]
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please try turning it off and on."})
    assert reply.json()["content"] == NOT_TOLD
    assert _events(client, eid, "user_tool_call") == []
    assert client.post(f"/v1/episodes/{eid}/score").json()["reward"] == 0


def test_a_line_waits_until_the_agent_asks_for_it(client: TestClient) -> None:
    """The line is not spent by a message that does not earn it: asked properly next, the customer acts."""
    eid = _start(client)["episode_id"]
    client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please try turning it off and on."})
    reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": REPLY}).json()
    assert reply["content"] == domain.tasks[[t.id for t in domain.tasks].index(TASK)].user.lines[1]
    assert [e["name"] for e in _events(client, eid, "user_tool_call")] == ["set_airplane_mode"]


def test_when_told_needs_actions_to_gate() -> None:
    text = (TASKS / "telecom-outage-005.yaml").read_text()
    bad = text.replace("  - OK, thanks for letting me know.\n", "  - say: OK.\n    when_told: [ticket]\n", 1)
    assert bad != text
    with pytest.raises(TaskInvalidError, match="only a line with actions waits to be told") as caught:
        load_task_text(bad, source="telecom-outage-005.yaml")
    assert caught.value.field == "user.script.1"


def test_a_domain_refuses_an_instruction_the_customer_cannot_follow() -> None:
    import dataclasses

    from env_server.domain import Instruction

    with pytest.raises(ValueError, match="not a user tool"):
        dataclasses.replace(domain, user_instructions=(Instruction(("ticket",), "open_ticket"),))
    with pytest.raises(ValueError, match="no when_told"):
        dataclasses.replace(domain, user_instructions=(Instruction((), "restart_router"),))
