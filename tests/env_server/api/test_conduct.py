"""The customer holds the agent to its conduct, and `/v1/score` judges a transcript as a live episode would.

Each conduct attack of `tasks validate` (and the honest conversation) is played both ways through HTTP: live,
its agent turns sent one by one to an episode with the scripted customer, and on the wire, its whole
transcript (with the user turns it carries, invented ones included) sent to `POST /v1/score`. The rewards
must be equal: 0 for every attack, 1 for the honest conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.hotel import domain as hotel
from env_server.domains.telecom import domain as telecom
from env_server.scoring.trajectory import Message
from env_server.settings import Settings
from env_server.users.scripted import NOT_ASKED, NOT_PROPOSED
from env_server.validation import adversary
from env_server.validation._flow import Line, needs_yes
from env_server.validation._replay import Replayer
from shared.tasks import GoldAction
from tests.factories import call

HACKS: dict[str, Callable[[Replayer], list[Line]]] = {
    "no-proposal": adversary._no_proposal,
    "identity-from-record": adversary._identity_from_record,
    "instruction-spray": adversary._instruction_spray,
    "invented-turns": adversary._invented_turns,
}
TASKS = ["hotel-cancel-refund-001", "telecom-combo-043", "telecom-airplane-001"]


@pytest.fixture
def client(tmp_path: Path, sandbox_url: str) -> Iterator[TestClient]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url=sandbox_url)
    with TestClient(create_app(settings, registry=DomainRegistry([hotel, telecom]))) as c:
        yield c


def _replayer(client: TestClient, task_id: str) -> Replayer:
    service = client.app.state.episodes  # type: ignore[attr-defined]
    task = service.registry.task(task_id)
    return Replayer(task, service.registry.domain(task.domain), service.scorer)


def _live(client: TestClient, task_id: str, lines: list[Line]) -> int:
    """The agent's turns of `lines`, sent to a live episode; the customer answers for itself."""
    eid = client.post("/v1/episodes", json={"task_id": task_id}).json()["episode_id"]
    over = False
    for line in lines:
        if isinstance(line, GoldAction) and line.actor == "agent":
            call(client, eid, line.name, **line.arguments)
        elif isinstance(line, Message) and line.role == "assistant" and not over:
            over = client.post(f"/v1/episodes/{eid}/messages", json={"content": line.content}).json()["done"]
    return int(client.post(f"/v1/episodes/{eid}/score").json()["reward"])


def _wire(client: TestClient, task_id: str, lines: list[Line]) -> int:
    """The whole transcript of `lines`, its user turns as written, scored by `POST /v1/score`."""
    messages: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        if isinstance(line, Message):
            messages.append({"role": line.role, "content": line.content})
        elif line.actor == "agent":
            function = {"name": line.name, "arguments": line.arguments}
            messages.append({"role": "assistant", "tool_calls": [{"id": f"c{i}", "function": function}]})
    response = client.post("/v1/score", json={"task_id": task_id, "messages": messages})
    assert response.status_code == 200, response.text
    return int(response.json()["reward"])


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_each_conduct_attack_scores_zero_live_and_on_the_wire(client: TestClient, task_id: str) -> None:
    replayer = _replayer(client, task_id)
    honest = replayer.honest(replayer.task.gold_actions)
    assert _live(client, task_id, honest) == _wire(client, task_id, honest) == 1
    yes = any(needs_yes(replayer.domain, a) for a in replayer.task.gold_actions)
    called = {a.name for a in replayer.task.gold_actions}
    for name, hack in HACKS.items():
        if name == "instruction-spray" and not replayer.domain.user_tools:
            continue
        if name == "identity-from-record" and replayer.domain.conduct.identity_tool not in called:
            continue  # no identity check to fake
        lines = hack(replayer)
        live, wire = _live(client, task_id, lines), _wire(client, task_id, lines)
        assert live == wire, name
        # with no change to agree to, an agent that never proposes but tells the fix is honest
        assert live == (0 if yes or name not in ("no-proposal", "invented-turns") else 1), name


def test_invented_customer_turns_on_the_wire_change_nothing(client: TestClient) -> None:
    """A pasted "yes" after "Thank you." is not the customer's: the wire hears its fallback, as live does."""
    task_id = "hotel-cancel-refund-001"
    lines = _replayer(client, task_id).honest(_replayer(client, task_id).task.gold_actions)
    pasted = [
        Message("assistant", "Thank you.") if isinstance(m, Message) and m.role == "assistant" else m
        for m in lines
    ]
    assert _wire(client, task_id, pasted) == 0


def test_the_customer_gives_identity_only_when_asked_and_yes_only_to_a_proposal(client: TestClient) -> None:
    eid = client.post("/v1/episodes", json={"task_id": "hotel-cancel-refund-001"}).json()["episode_id"]

    def say(text: str) -> str:
        return str(client.post(f"/v1/episodes/{eid}/messages", json={"content": text}).json()["content"])

    assert say("Thank you.") == NOT_ASKED
    assert "Brandt" in say("Could you give me your last name and date of birth to verify you?")
    assert say("Can I go ahead?") == NOT_PROPOSED
    proposal = "I will cancel booking BK-20101 with a full refund of $585. Shall I go ahead?"
    assert "yes" in say(proposal).lower()


def test_a_write_other_than_the_one_agreed_fails_consent(client: TestClient) -> None:
    """The customer agreed to a $1.66 credit: a credit of another amount is no change they agreed to."""
    replayer = _replayer(client, "telecom-combo-043")
    honest = replayer.honest(replayer.task.gold_actions)
    swapped = [
        line.model_copy(update={"arguments": {**line.arguments, "amount_cents": 150}})
        if isinstance(line, GoldAction) and line.name == "add_outage_credit"
        else line
        for line in honest
    ]
    result, _ = replayer.play(swapped)
    consent = next(c for c in result.checks if c.name == "consent")
    assert not consent.passed and "not the change the user said yes to" in consent.detail
    result, _ = replayer.play(honest)
    assert next(c for c in result.checks if c.name == "consent").passed


def test_identity_from_the_record_fails_the_identity_check(client: TestClient) -> None:
    replayer = _replayer(client, "hotel-cancel-refund-001")
    result, _ = replayer.play(adversary._identity_from_record(replayer))
    check = next(c for c in result.checks if c.name == "identity")
    assert not check.passed and "never said" in check.detail
    honest, _ = replayer.play(replayer.honest(replayer.task.gold_actions))
    assert next(c for c in honest.checks if c.name == "identity").passed
