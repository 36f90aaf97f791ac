"""Re-grading a run from its stored event logs: nothing moves when nothing changed, an edited gold moves
exactly its task's trials, and the command says why."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from env_server.app import build_service, create_app
from env_server.domain.registry import DomainRegistry
from env_server.episodes.regrade import regrade, updated_trial
from env_server.settings import Settings
from shared.models import ScoreResult
from shared.results import TrialResult, read_results
from tests.factories import call, play_reference, start_episode
from tests.toy_domain import domain as toy_domain

TRANSFER, TICKET = "toybank-transfer-001", "toybank-ticket-006"


def trial(client: TestClient, episode_id: str, task_id: str, number: int) -> TrialResult:
    """The results line `groundstate eval` writes for a scored episode."""
    score = ScoreResult.model_validate(client.post(f"/v1/episodes/{episode_id}/score").json())
    stored = TrialResult(
        task_id=task_id,
        domain="toybank",
        split="test",
        trial=number,
        policy="p",
        status="scored",
        reward=0,
        episode_id=episode_id,
    )
    return updated_trial(stored, score)


def play_run(client: TestClient) -> list[TrialResult]:
    """Two successes (the reference conversations) and a failure: a transfer of 40.00 instead of 50.00."""
    wrong = start_episode(client, TRANSFER)
    call(client, wrong, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=4000)
    client.post(f"/v1/episodes/{wrong}/messages", json={"content": "The transfer is complete."})
    return [
        trial(client, play_reference(client, TRANSFER), TRANSFER, 0),
        trial(client, wrong, TRANSFER, 1),
        trial(client, play_reference(client, TICKET), TICKET, 0),
    ]


def with_gold_amount(amount: int) -> DomainRegistry:
    """The toy domain with the transfer task's gold amount edited (a task corrected after the run)."""
    tasks = []
    for task in toy_domain.tasks:
        if task.id == TRANSFER:
            gold = [
                a.model_copy(update={"arguments": {**a.arguments, "amount_cents": amount}})
                if "amount_cents" in a.arguments
                else a
                for a in task.gold_actions
            ]
            task = task.model_copy(update={"gold_actions": gold})
        tasks.append(task)
    return DomainRegistry([dataclasses.replace(toy_domain, tasks=tasks)])


def test_regrade_reproduces_the_stored_rewards_when_nothing_changed(
    settings: Settings, toy_registry: DomainRegistry
) -> None:
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        stored = play_run(client)
    assert [t.reward for t in stored] == [1, 0, 1]
    report = regrade(build_service(settings, DomainRegistry([toy_domain])), stored)
    assert (report.unchanged, report.moved, report.changed, report.skipped) == (3, 0, 0, 0)
    assert [t.new_reward for t in report.trials] == [1, 0, 1]
    assert all(t.why == [] for t in report.trials)
    assert [
        updated_trial(s, t.score) for s, t in zip(stored, report.trials, strict=True) if t.score
    ] == stored


def test_an_edited_gold_moves_exactly_its_task_and_says_why(
    settings: Settings, toy_registry: DomainRegistry
) -> None:
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        stored = play_run(client)
    old = toy_registry.task(TRANSFER).fingerprint
    edited = with_gold_amount(4000)
    report = regrade(build_service(settings, edited), stored)
    moved = [
        (t.task_id, t.trial, t.old_reward, t.new_reward) for t in report.trials if t.outcome != "unchanged"
    ]
    assert moved == [(TRANSFER, 0, 1, 0), (TRANSFER, 1, 0, 1)]  # the ticket task did not move
    new = edited.task(TRANSFER).fingerprint
    assert report.trials[0].why == [f"task changed ({old} -> {new})"]
    assert report.trials[2].outcome == "unchanged" and report.trials[2].why == []


def test_the_regrade_command_reports_moves_and_writes_a_regraded_run(
    tmp_path: Path, toy_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundstate.cli import app

    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with TestClient(create_app(settings, registry=DomainRegistry([toy_domain]))) as client:
        stored = play_run(client)
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in stored))
    monkeypatch.setenv("GROUNDSTATE_STORE_URL", settings.store_url)
    monkeypatch.setenv("GROUNDSTATE_SANDBOX_URL", "sqlite://")
    monkeypatch.setenv("GROUNDSTATE_DOMAINS", '["toybank"]')
    result = CliRunner().invoke(app, ["regrade", str(run), "--out", str(tmp_path / "again")])
    assert result.exit_code == 0, result.output
    assert "3 trials: 3 unchanged, 0 moved" in result.output
    assert read_results(tmp_path / "again") == stored
