"""Re-grading a run: score its stored episodes again from their event logs, and say what moved and why.

A task corrected after a run, a scorer rule added or another judge changes rewards without the agent doing
anything differently. `groundstate regrade RUN` reads the run's `results.jsonl`, re-scores every scored
trial's episode from the control-plane store against today's tasks and scorer (no policy, no simulated user:
the event log holds every call and message), and compares each new score with the stored one and each new
grading version with the stored one: the task, its domain, the scorer or the judge changed.

When nothing changed, every reward comes back exactly as stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from env_server.episodes.service import EpisodeService
from env_server.errors import NotFoundError
from shared.models import GradingVersion, ScoreResult, WireModel
from shared.results import CheckOutcome, DiffEntry, TrialResult

Outcome = Literal["unchanged", "moved", "changed", "skipped"]


class RegradedTrial(WireModel):
    """One trial of the run, scored again."""

    task_id: str
    trial: int
    sample: int
    episode_id: str | None
    outcome: Outcome = Field(
        description="unchanged: the same reward, diff and failed checks; moved: another reward; changed: "
        "the same reward with another diff or failed checks; skipped: not re-scored (see `why`)."
    )
    old_reward: int | None
    new_reward: int | None = None
    why: list[str] = Field(
        default_factory=list,
        description="What changed in the grading (task, domain, scorer, judge) and in the replay, in words.",
    )
    score: ScoreResult | None = Field(default=None, description="The new score; null when skipped.")


class RegradeReport(WireModel):
    """A run re-graded: every trial, and the counts."""

    trials: list[RegradedTrial]
    unchanged: int
    moved: int
    changed: int
    skipped: int


def regrade(service: EpisodeService, results: Iterable[TrialResult]) -> RegradeReport:
    """Re-score every scored trial of `results` from its stored episode.

    Backend errors carry no reward to compare and trials without an episode id cannot be found: both are
    skipped, as are episodes the store does not hold and tasks the server no longer serves.
    """
    trials = [_regrade_one(service, r) for r in results]
    count = {
        o: sum(1 for t in trials if t.outcome == o) for o in ("unchanged", "moved", "changed", "skipped")
    }
    return RegradeReport(trials=trials, **count)


def _regrade_one(service: EpisodeService, stored: TrialResult) -> RegradedTrial:
    base = RegradedTrial(
        task_id=stored.task_id,
        trial=stored.trial,
        sample=stored.sample,
        episode_id=stored.episode_id,
        outcome="skipped",
        old_reward=stored.reward,
    )
    if stored.status != "scored":
        return base.model_copy(update={"why": ["a backend error: no reward to compare"]})
    if stored.episode_id is None:
        return base.model_copy(update={"why": ["no episode id in the results"]})
    try:
        score, notes = service.rescore(stored.episode_id)
    except NotFoundError as exc:
        return base.model_copy(update={"why": [exc.message]})
    if score.status != "scored":
        return base.model_copy(update={"why": [f"re-scoring failed: {score.error}"], "score": score})
    fresh = updated_trial(stored, score)
    if fresh.reward != stored.reward:
        outcome: Outcome = "moved"
    elif (fresh.diff, fresh.failed_checks) != (stored.diff, stored.failed_checks):
        outcome = "changed"
    else:
        outcome = "unchanged"
    why = grading_changes(stored.grading, score.grading) + notes
    if outcome != "unchanged" and not why:
        rubric = any(c.name.startswith("rubric:") for c in score.checks)
        why = ["same grading version: " + ("the judge answered otherwise" if rubric else "unexplained")]
    return base.model_copy(
        update={"outcome": outcome, "new_reward": score.reward, "why": why, "score": score}
    )


def grading_changes(old: GradingVersion | None, new: GradingVersion | None) -> list[str]:
    """What differs between two grading versions, in words (empty when they are equal)."""
    if new is None:
        return []
    if old is None:
        return ["graded before grading versions existed"]
    found = []
    if old.task_fingerprint != new.task_fingerprint:
        found.append(f"task changed ({old.task_fingerprint} -> {new.task_fingerprint})")
    if old.domain_fingerprint != new.domain_fingerprint:
        found.append(f"domain changed ({old.domain_fingerprint} -> {new.domain_fingerprint})")
    if old.scorer_version != new.scorer_version:
        found.append(f"scorer changed ({old.scorer_version} -> {new.scorer_version})")
    old_judge = f"{old.judge_model} / {old.judge_prompt_version}"
    new_judge = f"{new.judge_model} / {new.judge_prompt_version}"
    if old_judge != new_judge:
        found.append(f"judge changed ({old_judge} -> {new_judge})")
    return found


def updated_trial(stored: TrialResult, score: ScoreResult) -> TrialResult:
    """`stored` with the new score's reward, diff, failed checks and grading version (the rest as it was)."""
    return stored.model_copy(
        update={
            "reward": score.reward,
            "diff": [DiffEntry(kind=d.kind, table=d.table, key=d.key, column=d.column) for d in score.diff],
            "failed_checks": [
                CheckOutcome(name=c.name, passed=c.passed, detail=c.detail)
                for c in score.checks
                if not c.passed
            ],
            "grading": score.grading,
        }
    )
