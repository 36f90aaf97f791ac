"""A script that acts in a domain without a customer side: its calls are refused and recorded, no crash."""

from __future__ import annotations

from pathlib import Path

from env_server.domain.registry import DomainRegistry
from tests.factories import make_client, start_episode
from tests.toy_domain import domain as toy


def test_an_acting_line_in_a_domain_without_user_tools_is_a_refused_customer_call(tmp_path: Path) -> None:
    base = next(t for t in toy.tasks if t.id == "toybank-transfer-001")
    line = {"say": "I pressed the button.", "actions": [{"name": "press_button"}], "when_told": ["button"]}
    script = [base.user.script[0], line]  # it acts when told (the customer acts only on what it was asked)
    task = base.model_copy(
        update={
            "id": "toybank-acting-901",
            "user": base.user.model_validate({**base.user.model_dump(), "script": script}),
        }
    )
    with make_client(tmp_path, "sqlite://", DomainRegistry([toy], extra_tasks=[task])) as client:
        eid = start_episode(client, task.id)
        reply = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Please press the button."})
        assert reply.status_code == 200 and reply.json()["content"] == "I pressed the button."
        events = client.get(f"/v1/episodes/{eid}").json()["events"]
    [acted] = [e["payload"] for e in events if e["kind"] == "user_tool_call"]
    assert acted["name"] == "press_button" and "has no tool 'press_button'" in acted["error"]
    assert acted["output"] is None
