"""Evaluation campaigns against a real server: results, resume, retries, timeouts, concurrency, best-of-N."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient
from shared.models import EpisodeStarted
from tests.live_server import serve
from tests.toy_domain import domain as toy_domain
from trainer.evaluate import (
    RUN_FILE,
    SAMPLES_FILE,
    CampaignConfig,
    CampaignError,
    CampaignSummary,
    Candidate,
    majority_vote,
    run_campaign,
)
from trainer.metrics import compute_metrics
from trainer.policies import Message, Policy, Turn
from trainer.policies.scripted import RecordedPolicy, ReplayPolicy
from trainer.results import TrialResult, read_results, results_path

TRANSFER, FROZEN, JUDGE, ANALYTICS = (
    "toybank-transfer-001",
    "toybank-refuse-frozen-002",
    "toybank-judge-003",
    "toybank-analytics-004",
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


@pytest.fixture
def server(store: Path) -> Iterator[str]:
    settings = Settings(store_url=f"sqlite:///{store}", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


def episodes_started(store: Path) -> int:
    """Episodes the server created, read from its own store (an observation independent of the campaign)."""
    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])


def campaign(server: str, run_dir: Path, instance: Policy | None = None, **values: Any) -> CampaignSummary:
    """Run a campaign (the replay oracle by default, or `instance`) with no retry backoff."""
    values = {"policy": "replay", "server": server, "split": None, "retry_backoff_s": 0.0, **values}
    return asyncio.run(run_campaign(CampaignConfig(**values), run_dir, policy=instance, progress=False))


def keys(run_dir: Path) -> set[tuple[str, int, int]]:
    return {r.key for r in read_results(run_dir)}


class Stalling(Policy):
    """Wraps the replay: the first episode of each task hangs (a stuck endpoint), later ones play normally."""

    name = "replay"

    def __init__(self) -> None:
        self.inner = ReplayPolicy()
        self.stalled: set[str] = set()

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        if episode.task_id not in self.stalled:
            self.stalled.add(episode.task_id)
            await asyncio.sleep(3600)
        return await self.inner.for_episode(episode, client)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        raise AssertionError("always bound first")


class Watched(Policy):
    """Wraps the replay and records how many turns were being generated at once (with a little think time)."""

    name = "replay"

    def __init__(self) -> None:
        self.inner = ReplayPolicy()
        self.now = self.peak = 0

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        bound = await self.inner.for_episode(episode, client)
        watcher = self

        class Bound(Policy):
            name = "replay"

            async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
                watcher.now += 1
                watcher.peak = max(watcher.peak, watcher.now)
                try:
                    await asyncio.sleep(0.02)
                    return await bound.respond(messages, tools)
                finally:
                    watcher.now -= 1

        return Bound()

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        raise AssertionError("always bound first")


class Alternating(Policy):
    """The k-th episode of a task (k = 0, 1, 2, ...) gives up when k is even and plays the gold actions when
    k is odd: a policy that solves a task half of the time."""

    name = "alternating"

    def __init__(self) -> None:
        self.inner = ReplayPolicy()
        self.count: dict[str, int] = {}

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        index = self.count.get(episode.task_id, 0)
        self.count[episode.task_id] = index + 1
        if index % 2 == 0:
            return RecordedPolicy([Turn(content="I cannot help with that.", stop=True)], name=self.name)
        return await self.inner.for_episode(episode, client)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        raise AssertionError("always bound first")


def test_campaign_runs_k_trials_of_every_task_and_records_the_run(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = campaign(server, run_dir, tasks=[TRANSFER, ANALYTICS], trials=2, concurrency=2)
    assert (summary.tasks, summary.planned, summary.run, summary.skipped) == (2, 4, 4, 0)
    assert (summary.rollouts, summary.retries, summary.successes, summary.backend_errors) == (4, 0, 4, 0)
    results = read_results(run_dir)
    assert {r.key for r in results} == {(t, k, 0) for t in (TRANSFER, ANALYTICS) for k in (0, 1)}
    assert all(r.status == "scored" and r.reward == 1 and r.policy == "replay" for r in results)
    assert all(r.split == "test" and r.domain == "toybank" and r.episode_id for r in results)
    run = json.loads((run_dir / RUN_FILE).read_text())
    assert run["config"]["policy"] == "replay" and run["config"]["trials"] == 2
    assert len(run["invocations"]) == 1 and run["invocations"][0]["summary"]["run"] == 4
    assert run["invocations"][0]["finished_at"] is not None


def test_rerun_after_a_kill_runs_only_the_missing_trials(server: str, store: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    campaign(server, run_dir, tasks=[TRANSFER, FROZEN], trials=3, concurrency=2)
    everything = keys(run_dir)
    assert len(everything) == 6
    # a kill -9 mid-campaign: three lines made it to disk, the fourth was torn mid-write
    path = results_path(run_dir)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[3][:40])
    kept = keys(run_dir)
    episodes_before = episodes_started(store)
    summary = campaign(server, run_dir, tasks=[TRANSFER, FROZEN], trials=3, concurrency=2)
    assert (summary.skipped, summary.run, summary.rollouts) == (3, 3, 3)
    assert episodes_started(store) - episodes_before == 3, "the server saw exactly the missing trials"
    assert keys(run_dir) == everything
    assert all(r.reward == 1 for r in read_results(run_dir))
    appended = [json.loads(x) for x in path.read_text().splitlines()[4:]]
    assert {(r["task_id"], r["trial"], r["sample"]) for r in appended} == everything - kept
    # a third run has nothing left to do
    assert campaign(server, run_dir, tasks=[TRANSFER, FROZEN], trials=3).run == 0
    assert len(json.loads((run_dir / RUN_FILE).read_text())["invocations"]) == 3


def test_backend_errors_are_retried_then_reported_apart(server: str, store: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = campaign(server, run_dir, tasks=[TRANSFER, JUDGE], trials=2, retries=2)  # no judge configured
    assert (summary.run, summary.successes, summary.backend_errors) == (4, 2, 2)
    assert (summary.retries, summary.rollouts) == (4, 8)
    assert episodes_started(store) == 8
    judged = [r for r in read_results(run_dir) if r.task_id == JUDGE]
    assert [(r.status, r.reward) for r in judged] == [("backend_error", None)] * 2
    assert all(r.error and "no judge is configured" in r.error for r in judged)
    metrics = compute_metrics(read_results(run_dir))
    assert (metrics.backend_errors, metrics.trials, metrics.pass_at_1) == (2, 2, 1.0)
    assert metrics.tasks_without_clean_trials == 1
    # a rerun retries the errored trials, and only those
    again = campaign(server, run_dir, tasks=[TRANSFER, JUDGE], trials=2, retries=0)
    assert (again.skipped, again.run, again.backend_errors) == (2, 2, 2)


def test_a_stuck_episode_times_out_and_its_retry_succeeds(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = campaign(
        server, run_dir, Stalling(), tasks=[TRANSFER, FROZEN], trials=1, retries=1, timeout_s=2.0
    )
    assert (summary.rollouts, summary.retries, summary.backend_errors, summary.successes) == (4, 2, 0, 2)
    assert [(r.status, r.reward) for r in read_results(run_dir)] == [("scored", 1)] * 2


def test_timeouts_that_persist_are_recorded_as_backend_errors(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with socket.socket() as hole:  # accepts connections, never answers
        hole.bind(("127.0.0.1", 0))
        hole.listen(16)
        spec = f"openai:m@http://127.0.0.1:{hole.getsockname()[1]}/v1?max_retries=0"
        summary = campaign(server, run_dir, policy=spec, tasks=[TRANSFER], trials=1, retries=1, timeout_s=0.5)
    assert (summary.rollouts, summary.retries, summary.backend_errors) == (2, 1, 1)
    [line] = read_results(run_dir)
    assert (line.status, line.reward, line.policy) == ("backend_error", None, "m")
    assert line.error == "episode timed out after 0.5 s in policy"


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_limit_is_respected(server: str, tmp_path: Path, concurrency: int) -> None:
    watched = Watched()
    summary = campaign(
        server,
        tmp_path / "run",
        watched,
        tasks=[TRANSFER, FROZEN, ANALYTICS],
        trials=3,
        concurrency=concurrency,
    )
    assert summary.run == 9 and summary.successes == 9
    assert summary.peak_running == concurrency
    assert 1 <= watched.peak <= concurrency


def test_first_success_verified_stops_at_the_first_success(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = campaign(
        server, run_dir, Alternating(), tasks=[TRANSFER], trials=1, samples=4, select="first-success-verified"
    )
    assert (summary.run, summary.rollouts, summary.successes) == (1, 2, 1)
    lines = sorted(read_results(run_dir), key=lambda r: r.key)
    assert [(r.trial, r.sample, r.reward) for r in lines] == [(0, 1, 0), (0, 2, 1)]
    best = compute_metrics(lines).best_of_n
    assert best is not None and best.pass_at_1 == 1.0 and best.trials == 1
    assert compute_metrics(lines).trials == 0, "best-of-N lines stay out of the single-sample metrics"


def test_first_success_verified_records_every_candidate_of_a_failure(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    failing = RecordedPolicy([Turn(content="No.", stop=True)])
    campaign(server, run_dir, failing, tasks=[TRANSFER], trials=1, samples=3, select="first-success-verified")
    assert sorted((r.sample, r.reward) for r in read_results(run_dir)) == [(1, 0), (2, 0), (3, 0)]
    assert (
        campaign(
            server, run_dir, failing, tasks=[TRANSFER], trials=1, samples=3, select="first-success-verified"
        ).run
        == 0
    )


def test_majority_vote_follows_the_most_common_outcome(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    summary = campaign(
        server, run_dir, Alternating(), tasks=[TRANSFER], trials=1, samples=3, select="majority"
    )
    assert (summary.run, summary.rollouts, summary.successes) == (1, 3, 0)
    candidates = [Candidate.model_validate_json(x) for x in (run_dir / SAMPLES_FILE).read_text().splitlines()]
    by_sample = {c.result.sample: c for c in candidates}
    assert sorted(by_sample) == [1, 2, 3]
    failures = [c for c in candidates if c.result.reward == 0]
    [success] = [c for c in candidates if c.result.reward == 1]
    assert len(failures) == 2 and failures[0].signature == failures[1].signature != success.signature
    [line] = read_results(run_dir)
    assert (line.sample, line.reward) == (3, 0), "two failures outvote one success; the reward did not choose"
    best = compute_metrics([line]).best_of_n
    assert best is not None and best.samples_per_trial == 3 and best.pass_at_1 == 0.0
    # resuming finds the trial done
    assert (
        campaign(server, run_dir, Alternating(), tasks=[TRANSFER], trials=1, samples=3, select="majority").run
        == 0
    )


def test_majority_vote_of_agreeing_successes_sums_the_cost(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    campaign(server, run_dir, tasks=[ANALYTICS], trials=1, samples=3, select="majority")
    [line] = read_results(run_dir)
    candidates = [Candidate.model_validate_json(x) for x in (run_dir / SAMPLES_FILE).read_text().splitlines()]
    assert len({c.signature for c in candidates}) == 1 and (line.sample, line.reward) == (3, 1)
    assert line.latency_s == pytest.approx(sum(c.result.latency_s for c in candidates), abs=0.01)


def line(sample: int, reward: int | None) -> TrialResult:
    return TrialResult(
        task_id="t",
        domain="d",
        split="test",
        trial=0,
        sample=sample,
        policy="p",
        status="scored" if reward is not None else "backend_error",
        reward=reward,
        tokens_in=10,
        tokens_out=1,
        error=None if reward is not None else f"boom {sample}",
    )


def test_majority_vote_breaks_ties_by_the_earliest_candidate_and_ignores_backend_errors() -> None:
    votes = [
        Candidate(signature=None, result=line(1, None)),
        Candidate(signature="b", result=line(3, 0)),
        Candidate(signature="a", result=line(2, 1)),
    ]
    chosen = majority_vote(votes, samples=3)
    assert (chosen.sample, chosen.reward) == (3, 1)  # a 1-1 tie goes to candidate 2, the earliest voter
    assert (chosen.tokens_in, chosen.tokens_out) == (20, 2), "cost summed over the clean candidates"
    failed = majority_vote([Candidate(signature=None, result=line(s, None)) for s in (1, 2)], samples=2)
    assert (failed.status, failed.sample) == ("backend_error", 2)
    assert failed.error == "all 2 candidates failed; last: boom 2"


def test_a_run_directory_refuses_another_campaign(server: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    campaign(server, run_dir, tasks=[FROZEN], trials=1)
    with pytest.raises(CampaignError, match="policy: 'replay' -> 'openai:m'"):
        campaign(server, run_dir, tasks=[FROZEN], trials=1, policy="openai:m")
    # more trials or more tasks extend the same campaign
    assert campaign(server, run_dir, tasks=[FROZEN, TRANSFER], trials=2).run == 3


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"domains": ["hotel"]}, "unknown domains hotel; the server has: toybank"),
        ({"tasks": ["toybank-nope-009"]}, "tasks not found in domains toybank, split any: toybank-nope-009"),
        ({"tasks": [FROZEN], "split": "test"}, f"tasks not found in domains toybank, split test: {FROZEN}"),
    ],
)
def test_selection_errors_name_the_problem(
    server: str, tmp_path: Path, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(CampaignError) as info:
        campaign(server, tmp_path / "run", **values)
    assert str(info.value) == message
    assert not (tmp_path / "run").exists(), "a campaign that cannot start leaves no run directory"


def test_limit_takes_the_first_tasks_of_each_domain(server: str, tmp_path: Path) -> None:
    summary = campaign(server, tmp_path / "run", split="test", limit=2, trials=1, retries=0)
    assert summary.tasks == 2
    assert {r.task_id for r in read_results(tmp_path / "run")} == {ANALYTICS, JUDGE}  # the first two by id


def test_best_of_n_needs_a_selection() -> None:
    with pytest.raises(ValueError, match="best-of-N"):
        CampaignConfig(policy="replay", samples=3)
    with pytest.raises(ValueError, match="best-of-N"):
        CampaignConfig(policy="replay", select="majority")


def test_a_model_whose_tool_format_is_unsupported_stops_the_campaign_before_a_trial_is_scored(
    server: str, tmp_path: Path
) -> None:
    """Never a silent 0: the `local:` policy refuses the template, and the campaign stops with the reason."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from trainer.policies import PolicySpecError
    from trainer.policies.local import LocalModel, LocalPolicy, resolve_model

    directory, gguf = resolve_model("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=gguf)
    tokenizer.chat_template = (  # gpt-oss style: tools as a TypeScript namespace
        "{%- if tools %}namespace functions { {%- for t in tools %}type {{ t.function.name }} = () => any;"
        "{%- endfor %} }{%- endif %}{%- for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}"
        "<|end|>{%- endfor %}"
    )
    loaded = LocalModel(name="harmony", model=None, tokenizer=tokenizer, eos_ids=[1], max_positions=2048)
    run_dir = tmp_path / "run"
    with pytest.raises(PolicySpecError, match="Supported formats: qwen3_coder, hermes, mistral, llama3_json"):
        campaign(server, run_dir, LocalPolicy("harmony", loaded=loaded), tasks=[TRANSFER], trials=2)
    assert not results_path(run_dir).is_file()  # no trial was scored, not even as a 0
