"""The results file of an evaluation run: one `TrialResult` per line of `RUN_DIR/results.jsonl`.

An evaluation campaign appends one JSON object per finished episode (a *trial*) to `results.jsonl` in its run
directory; metrics, difficulty selection, reports and the server's viewer (`/ui`) read nothing else. The
format is the pydantic model `TrialResult` below (`TrialResult.model_json_schema()` gives its JSON schema),
so any tool can write it:

    {"task_id": "hotel-corp-modify-approval-007", "domain": "hotel", "split": "test", "trial": 3,
     "sample": 0, "policy": "gpt-4.1-mini", "status": "scored", "reward": 0, "tokens_in": 18211,
     "tokens_out": 944, "turns": 7, "tool_calls": 5, "latency_s": 21.4, "error": null,
     "diff": [{"kind": "missing", "table": "approval_requests", "key": "AR-0001", "column": null}],
     "failed_checks": [{"name": "state", "passed": false, "detail": "1 missing change"}]}

Rules of the file:
- Lines are appended, never rewritten. A rerun of the same `(task_id, trial, sample)` appends a new line and
  the latest line wins when the file is read.
- A process killed mid-write can leave a torn last line; `read_results` skips lines that are not JSON (with a
  warning), and the writer (`trainer.results.append_result`) starts a new line after such a fragment. A line
  that is JSON but does not match the model is a writer bug and raises.

The format and its reader live in `shared/` because both sides read runs: the trainer analyses them and the
environment server's viewer shows them, and neither may import the other. Writing stays in the trainer.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from shared.models import GradingVersion
from shared.strict_model import StrictModel
from shared.tasks import Split

__all__ = [
    "RESULTS_FILE",
    "UNSCORED",
    "CheckOutcome",
    "DiffEntry",
    "DiffKind",
    "TrialResult",
    "TrialStatus",
    "grading_conflicts",
    "latest_per_key",
    "read_results",
    "results_path",
]

logger = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
"""The file name of the results inside a run directory."""

TrialStatus = Literal["scored", "backend_error", "policy_error"]
UNSCORED: tuple[TrialStatus, ...] = ("backend_error", "policy_error")
"""The statuses of a trial that carries no reward: an infrastructure failure, never the agent's 0."""
DiffKind = Literal["missing", "wrong", "extra"]


class DiffEntry(StrictModel):
    """One difference between the agent's final state and the expected one."""

    kind: DiffKind
    """`missing`: an expected change the agent did not make; `wrong`: a change made with a wrong value;
    `extra`: a change the agent made that was not expected (a side effect)."""
    table: str
    """The table the change belongs to, e.g. `bookings`."""
    key: str
    """The row's key as text, e.g. `BK-20417` (or a content description for rows matched by content)."""
    column: str | None = None
    """For `wrong`, the column holding the wrong value; null when the whole row is missing or extra."""


class CheckOutcome(StrictModel):
    """The outcome of one scoring check (the state comparison, a `communicate` item, a rubric question…)."""

    name: str
    """`<kind>` or `<kind>:<item>`, e.g. `state`, `communicate:manager approval`, `rubric:0`. Reports group
    failures by the part before the first colon."""
    passed: bool
    """Whether the check passed."""
    detail: str = ""
    """Why it failed (or passed), in words, e.g. the judge's reason."""


class TrialResult(StrictModel):
    """One finished episode (one trial of one task), as one line of `results.jsonl`."""

    task_id: str = Field(min_length=1)
    """The task's id."""
    domain: str = Field(min_length=1)
    """The task's domain, e.g. `hotel`."""
    split: Split
    """The task's split: `train` or `test` (test tasks never enter a training pool)."""
    trial: int = Field(ge=0)
    """The trial index of this task in the campaign, from 0."""
    sample: int = Field(default=0, ge=0)
    """0 for a single-sample trial; 1..N for the N candidates of a best-of-N trial (one line each)."""
    policy: str = Field(min_length=1)
    """The policy that acted, e.g. a model name; one run directory normally holds one policy."""
    status: TrialStatus
    """`scored`: the episode ended and was scored; `backend_error`: the environment failed (sandbox,
    simulated user, judge, a tool raising unexpectedly, the time budget); `policy_error`: the policy's own
    endpoint failed (unreachable, an HTTP error, a context window too small for the task's first prompt), so
    the model never played. Neither carries a reward: both are left out of the metrics and counted apart,
    by name."""
    reward: Literal[0, 1] | None = None
    """1 if every check passed, else 0; null exactly when `status` is `backend_error` or `policy_error`."""
    tokens_in: int = Field(default=0, ge=0)
    """Prompt tokens the policy consumed over the whole episode (summed over its turns)."""
    tokens_out: int = Field(default=0, ge=0)
    """Completion tokens the policy generated over the whole episode."""
    turns: int = Field(default=0, ge=0)
    """Assistant turns (policy calls) in the episode."""
    tool_calls: int = Field(default=0, ge=0)
    """Tool calls the policy made in the episode."""
    latency_s: float = Field(default=0.0, ge=0)
    """Wall-clock seconds from episode start to score."""
    error: str | None = None
    """What went wrong: the backend error's message, or a policy-side failure (e.g. turn limit); else null."""
    episode_id: str | None = None
    """The server's episode id, to look the episode up; null when unknown."""
    diff: list[DiffEntry] = Field(default_factory=list)
    """The state differences that made the state check fail; empty when the state matched."""
    failed_checks: list[CheckOutcome] = Field(default_factory=list)
    """The checks that failed (state, communicate, rubric judge…); empty for a success."""
    grading: GradingVersion | None = None
    """What the score was graded against (task and domain fingerprints, scorer version, judge); null for a
    backend error and for results written before grading versions existed. Metrics refuse to pool results
    of different grading versions (see `grading_conflicts`)."""
    blame: Literal["agent", "user", "undecided"] | None = None
    """For a failure played with the LLM user, whose fault it was (`groundstate blame RUN --out`): metrics
    then report pass@1 without the user-caused failures apart. Null when not blamed."""

    @model_validator(mode="after")
    def _reward_matches_status(self) -> TrialResult:
        if self.status == "scored" and self.reward is None:
            raise ValueError("a scored trial needs a reward of 0 or 1")
        if self.status != "scored" and self.reward is not None:
            raise ValueError(f"a {self.status} trial carries no reward, got reward={self.reward}")
        return self

    @property
    def key(self) -> tuple[str, int, int]:
        """The identity of the trial in its run: `(task_id, trial, sample)`; a later line with it wins."""
        return (self.task_id, self.trial, self.sample)


def results_path(run_dir: str | os.PathLike[str]) -> Path:
    """Where the results of a run live.

    Args:
        run_dir: A run directory, or the path of a `.jsonl` results file itself.

    Returns:
        `run_dir/results.jsonl`, or `run_dir` unchanged when it names a `.jsonl` file.
    """
    path = Path(run_dir)
    return path if path.suffix == ".jsonl" else path / RESULTS_FILE


def read_results(run_dir: str | os.PathLike[str]) -> list[TrialResult]:
    """Read the results of a run, latest record per `(task_id, trial, sample)`.

    Args:
        run_dir: A run directory holding `results.jsonl`, or the results file itself.

    Returns:
        One record per trial key, in the order the keys first appeared; a rerun's later line replaces the
        earlier one. Lines that are not JSON (torn writes from a killed process) are skipped with a warning.

    Raises:
        FileNotFoundError: There is no results file.
        ValueError: A line is JSON but not a valid `TrialResult` (the message names the line).
    """
    path = results_path(run_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"no results file at {path} (expected a run directory holding {RESULTS_FILE})"
        )
    return latest_per_key(_parse_lines(path))


def latest_per_key(results: Iterable[TrialResult]) -> list[TrialResult]:
    """Keep the last record of each `(task_id, trial, sample)`, at the position its key first appeared."""
    latest: dict[tuple[str, int, int], TrialResult] = {}
    for result in results:
        latest[result.key] = result
    return list(latest.values())


def _parse_lines(path: Path) -> list[TrialResult]:
    records: list[TrialResult] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            text = raw.strip()
            if not text:
                continue
            try:
                data = json.loads(text)
            except (json.JSONDecodeError, UnicodeDecodeError):
                logger.warning("%s:%d: skipping a torn line (not JSON): %r", path, number, text[:80])
                continue
            try:
                records.append(TrialResult.model_validate(data))
            except ValidationError as exc:
                raise ValueError(f"{path}:{number}: not a valid TrialResult: {exc}") from exc
    return records


def grading_conflicts(results: Iterable[TrialResult]) -> list[str]:
    """Why these results were graded against different things (empty when they can be pooled).

    Scored results pool when they share one scorer version, one judge (among those a judge graded), one
    fingerprint per task and one per domain. Results without a grading version (written before grading
    versions existed) pool only with each other: beside graded ones their grading is unknown. Backend
    errors carry no reward and are never in conflict.

    Args:
        results: A run's records (latest per key).

    Returns:
        One sentence per conflict, naming the versions and how many results hold each.
    """
    scored = [r for r in results if r.status == "scored"]
    graded = [r for r in scored if r.grading is not None]
    conflicts: list[str] = []
    if graded and len(graded) < len(scored):
        conflicts.append(
            f"{len(scored) - len(graded)} of {len(scored)} scored results carry no grading version "
            "(written before grading versions existed)"
        )

    def split(label: str, seen: list[str]) -> None:
        counts = {v: seen.count(v) for v in sorted(set(seen))}
        if len(counts) > 1:
            conflicts.append(f"{label} differ: " + ", ".join(f"{v} ({n})" for v, n in counts.items()))

    versions = [(r, r.grading) for r in graded if r.grading is not None]
    split("scorer versions", [g.scorer_version for _, g in versions])
    split(
        "judges (model / prompt)",
        [f"{g.judge_model} / {g.judge_prompt_version}" for _, g in versions if g.judge_model],
    )
    by_task: dict[str, list[str]] = {}
    by_domain: dict[str, list[str]] = {}
    for r, g in versions:
        by_task.setdefault(r.task_id, []).append(g.task_fingerprint)
        by_domain.setdefault(r.domain, []).append(g.domain_fingerprint)
    for domain, seen in sorted(by_domain.items()):
        split(f"fingerprints of domain {domain}", seen)
    for task_id, seen in sorted(by_task.items()):
        split(f"fingerprints of task {task_id}", seen)
    return conflicts
