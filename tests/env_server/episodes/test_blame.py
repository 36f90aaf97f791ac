"""Blame on crafted LLM-user transcripts: the agent's own failures, the user's mistakes of each kind, and the
scripted counterfactual. The crafted user is a `SimulatedUser` of kind `llm` saying fixed lines: the episode
is played, stored and scored exactly as with a model behind it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.episodes.blame import BlameResult, blame_episode
from env_server.settings import Settings
from env_server.users.base import SimulatedUser, TranscriptMessage, UserTurn
from shared.results import TrialResult, read_results
from shared.tasks import Task
from tests.factories import call, start_episode
from tests.toy_domain import domain as toy_domain

HOTEL = "hotel-change-dates-001"


class TranscriptUser(SimulatedUser):
    """An `llm` user whose lines are fixed in advance; the last one ends the conversation."""

    kind = "llm"
    model = "crafted"
    prompt_version = "crafted-v1"

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def opening(self, task: Task, seed: int | None = None) -> UserTurn:
        return UserTurn(self.lines[0], done=len(self.lines) == 1)

    def reply(
        self, task: Task, transcript: list[TranscriptMessage], writes_this_turn: int, seed: int | None = None
    ) -> UserTurn:
        said = sum(1 for m in transcript if m.role == "user")
        return UserTurn(self.lines[said], done=said == len(self.lines) - 1)


@pytest.fixture
def app_client(settings: Settings) -> Iterator[TestClient]:
    """The toy bank (no consent) and the hotel (a yes before changes, dates the user gives)."""
    registry = DomainRegistry([toy_domain, *DomainRegistry.discover([], only=["hotel"]).domains])
    with TestClient(create_app(settings, registry=registry)) as client:
        yield client


def play(client: TestClient, task_id: str, lines: list[str], turns: list[Any]) -> BlameResult:
    """Play `turns` (tool calls as (name, arguments), messages as text) with a user saying `lines`; blame."""
    service = client.app.state.episodes  # type: ignore[attr-defined]
    service.users["llm"] = TranscriptUser(lines)
    episode = start_episode(client, task_id, user="llm")
    for turn in turns:
        if isinstance(turn, str):
            assert client.post(f"/v1/episodes/{episode}/messages", json={"content": turn}).status_code == 200
        else:
            call(client, episode, turn[0], **turn[1])
    assert client.post(f"/v1/episodes/{episode}/score").json()["reward"] == 0
    return blame_episode(service, episode)


TOY_OPEN = "Please move 50.00 from AC-0001 to AC-0002."


def transfer(amount: int) -> tuple[str, dict[str, Any]]:
    return ("transfer", {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": amount})


def test_a_wrong_write_on_right_facts_is_the_agents(app_client: TestClient) -> None:
    blame = play(
        app_client,
        "toybank-transfer-001",
        [TOY_OPEN, "Thanks!"],
        [transfer(4000), "The transfer is complete."],
    )
    assert blame.verdict == "agent" and blame.scripted_reward == 0 and blame.user_evidence == []
    assert blame.reason.startswith("call 0: set accounts") and "the task wants 5000" in blame.reason


def test_an_echoed_fact_that_the_script_leaves_to_the_agent_is_the_users(app_client: TestClient) -> None:
    echo = "Please move 50.00 from AC-0001 to AC-0002 and tell me once it is complete."
    blame = play(
        app_client, "toybank-transfer-001", [echo, "Thanks!"], [transfer(5000), "The transfer is complete."]
    )
    assert blame.verdict == "user" and blame.scripted_reward == 1
    assert "communicate:complete" in blame.reason


def test_a_user_that_stops_early_is_blamed(app_client: TestClient) -> None:
    blame = play(
        app_client, "toybank-transfer-001", [TOY_OPEN, "Never mind, bye."], ["Which account is yours?"]
    )
    assert blame.verdict == "user" and blame.reason.startswith("stopped early")


@pytest.mark.parametrize(
    "line",
    [
        "As an AI language model, how can I help you today?",
        # what SmolLM2-135M said as the hotel guest in a real campaign
        "I'm sorry for any misunderstanding, but as a customer service agent, I don't have access to that.",
    ],
)
def test_a_persona_break_beside_an_agent_deviation_is_undecided(app_client: TestClient, line: str) -> None:
    lines = [TOY_OPEN, line]
    blame = play(app_client, "toybank-transfer-001", lines, [transfer(4000), "The transfer is complete."])
    assert blame.verdict == "undecided" and blame.user_evidence[0].startswith("broke its persona")
    assert blame.agent_evidence and "the task wants 5000" in blame.agent_evidence[0]


IDENTITY = (
    "verify_guest_identity",
    {"guest_id": "G-2111", "last_name": "Brenner", "date_of_birth": "1993-10-27"},
)


def test_a_wrong_fact_the_user_gave_and_the_agent_wrote_is_the_users(app_client: TestClient) -> None:
    lines = [
        "Hi, please move booking BK-21101 to check in 2026-10-14 and check out 2026-10-17.",
        "Brenner, 27 October 1993.",
        "Yes, please change it.",
        "Thanks, bye.",
    ]
    dates = {"booking_id": "BK-21101", "check_in": "2026-10-14", "check_out": "2026-10-17"}
    turns = [
        ("get_booking", {"booking_id": "BK-21101"}),
        "Please confirm your last name and date of birth.",
        IDENTITY,
        ("quote_booking_change", dates),
        "Moving it to 2026-10-14 to 2026-10-17 costs a small difference. Shall I proceed?",
        ("change_booking_dates", {**dates, "charge_change_fee": False}),
        "Done: your booking now runs 2026-10-14 to 2026-10-17.",
    ]
    blame = play(app_client, HOTEL, lines, turns)
    assert blame.verdict == "user", blame
    assert blame.reason.startswith("wrong facts: said '2026-10-17'")


def test_a_user_who_never_says_yes_is_blamed_for_the_missing_change(app_client: TestClient) -> None:
    lines = [
        "Hey, could you move my booking BK-21101 at Spree Central one day later? So 14 to 16 October.",
        "Brenner, 27 October 1993.",
        "Hmm, I would rather think about it some more.",
        "Bye.",
    ]
    dates = {"booking_id": "BK-21101", "check_in": "2026-10-14", "check_out": "2026-10-16"}
    turns = [
        ("get_booking", {"booking_id": "BK-21101"}),
        "Please confirm your last name and date of birth.",
        IDENTITY,
        ("quote_booking_change", dates),
        "Moving it to 14-16 October costs a small difference. Shall I proceed?",
        "Of course, take your time.",
    ]
    blame = play(app_client, HOTEL, lines, turns)
    assert blame.verdict == "user" and blame.agent_evidence == []
    assert any(e.startswith("refused the confirmation") for e in blame.user_evidence)


def test_an_episode_with_the_scripted_user_is_not_blamed(app_client: TestClient) -> None:
    episode = start_episode(app_client)
    name, arguments = transfer(4000)
    call(app_client, episode, name, **arguments)
    app_client.post(f"/v1/episodes/{episode}/score")
    blame = blame_episode(app_client.app.state.episodes, episode)  # type: ignore[attr-defined]
    assert blame.verdict == "not-blamed" and "scripted" in blame.reason


def test_the_api_blames_and_names_an_unknown_episode(app_client: TestClient) -> None:
    lines = [TOY_OPEN, "Never mind, bye."]
    app_client.app.state.episodes.users["llm"] = TranscriptUser(lines)  # type: ignore[attr-defined]
    episode = start_episode(app_client, "toybank-transfer-001", user="llm")
    app_client.post(f"/v1/episodes/{episode}/messages", json={"content": "Which account is yours?"})
    app_client.post(f"/v1/episodes/{episode}/score")
    body = app_client.get(f"/v1/episodes/{episode}/blame").json()
    assert body["verdict"] == "user" and body["reason"].startswith("stopped early")
    missing = app_client.get("/v1/episodes/nope/blame")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "episode_id"


def test_the_blame_command_counts_a_runs_failures(
    tmp_path: Path, toy_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundstate.cli import app

    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with TestClient(create_app(settings, registry=DomainRegistry([toy_domain]))) as client:
        client.app.state.episodes.users["llm"] = TranscriptUser([TOY_OPEN, "Never mind, bye."])  # type: ignore[attr-defined]
        episode = start_episode(client, "toybank-transfer-001", user="llm")
        client.post(f"/v1/episodes/{episode}/messages", json={"content": "Which account is yours?"})
        client.post(f"/v1/episodes/{episode}/score")
    line = TrialResult(
        task_id="toybank-transfer-001",
        domain="toybank",
        split="test",
        trial=0,
        policy="p",
        status="scored",
        reward=0,
        episode_id=episode,
    )
    (tmp_path / "results.jsonl").write_text(line.model_dump_json() + "\n")
    monkeypatch.setenv("GROUNDSTATE_STORE_URL", settings.store_url)
    result = CliRunner().invoke(app, ["blame", str(tmp_path), "--out", str(tmp_path / "blamed")])
    assert result.exit_code == 0, result.output
    assert "1 failures: 0 agent, 1 user, 0 undecided, 0 not blamed" in result.output
    assert [r.blame for r in read_results(tmp_path / "blamed")] == ["user"]
