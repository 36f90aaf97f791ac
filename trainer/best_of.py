"""Best-of-N at evaluation time: N candidates per trial, and how one of them becomes the trial's line.

Records with `sample > 0` are best-of-N lines, reported apart by the metrics.

- `first-success-verified`: candidates 1..N are sampled one after another and sampling stops at the first
  that scores 1. Each candidate is one line (`sample` = its index); the metrics count the trial as solved if
  any candidate scored 1. The environment's reward picks the winner, so this is an oracle-verified upper
  bound (pass@N with early stopping), not something a deployed agent could do.
- `majority`: all N candidates are sampled; candidates are grouped by their final outcome (the server's
  full state diff against the expected changes, values included, plus the rows of the last
  `submit_answer`), and the largest group wins (ties: the group whose first member has the lowest
  index). The trial's line is the winning group's first candidate, written with `sample = N`, with tokens
  and latency summed over all clean candidates (the attempt's cost); every candidate goes to
  `RUN_DIR/samples.jsonl` with its signature. No reward is used to choose, so this is a deployable selector.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from shared.strict_model import StrictModel
from trainer.results import TrialResult
from trainer.rollout_models import RolloutResult

__all__ = ["SAMPLES_FILE", "Candidate", "Selection", "majority_vote", "read_candidates", "state_signature"]

SAMPLES_FILE = "samples.jsonl"
"""The candidates of majority-vote trials, inside the run directory."""

Selection = Literal["majority", "first-success-verified"]


class Candidate(StrictModel):
    """One candidate of a majority-vote trial, as a line of `samples.jsonl`."""

    signature: str | None
    """The candidate's outcome signature (`state_signature`); null for a backend error."""
    result: TrialResult
    """The candidate's record (`sample` = its index, 1..N)."""


def state_signature(rollout: RolloutResult) -> str | None:
    """A fingerprint of a scored rollout's outcome: its state diff (with values) and its submitted answer.

    Two rollouts with the same signature left the same changes against the task's initial state (the diff
    against the one expected change set determines them) and submitted the same answer rows (in any order).

    Returns:
        16 hex digits, or null when the rollout was not scored.
    """
    if rollout.status != "scored" or rollout.score is None:
        return None
    diff = sorted(json.dumps(d.model_dump(mode="json"), sort_keys=True) for d in rollout.score.diff)
    answer: list[str] | None = None
    for event in rollout.events:
        data = event.data
        if event.kind == "tool_call" and data.get("name") == "submit_answer" and data.get("outcome") == "ok":
            rows = data.get("arguments", {}).get("rows", [])
            answer = sorted(json.dumps(r, sort_keys=True) for r in rows)
    payload = json.dumps({"diff": diff, "answer": answer}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def majority_vote(candidates: Sequence[Candidate], samples: int) -> TrialResult:
    """The majority-vote line of one trial from its candidates (see the module docstring).

    Args:
        candidates: The trial's candidates (any order; backend errors are not voters).
        samples: N, written as the line's `sample`.

    Returns:
        The winning group's first candidate with `sample = N` and tokens/latency summed over the clean
        candidates; a `backend_error` line when no candidate was scored.

    Raises:
        ValueError: No candidates.
    """
    if not candidates:
        raise ValueError("majority_vote needs at least one candidate")
    ordered = sorted(candidates, key=lambda c: c.result.sample)
    clean = [c for c in ordered if c.signature is not None and c.result.status == "scored"]
    if not clean:
        last = ordered[-1].result
        return last.model_copy(
            update={"sample": samples, "error": f"all {len(ordered)} candidates failed; last: {last.error}"}
        )
    groups: dict[str, list[Candidate]] = {}
    for candidate in clean:
        groups.setdefault(candidate.signature or "", []).append(candidate)
    winner = max(groups.values(), key=lambda g: (len(g), -g[0].result.sample))
    return winner[0].result.model_copy(
        update={
            "sample": samples,
            "tokens_in": sum(c.result.tokens_in for c in clean),
            "tokens_out": sum(c.result.tokens_out for c in clean),
            "latency_s": round(sum(c.result.latency_s for c in clean), 3),
        }
    )


def read_candidates(path: Path) -> dict[tuple[str, int, int], Candidate]:
    """The latest candidate per key; torn lines from a killed writer are skipped."""
    found: dict[tuple[str, int, int], Candidate] = {}
    if not path.is_file():
        return found
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            candidate = Candidate.model_validate_json(raw)
        except ValidationError:
            continue
        found[candidate.result.key] = candidate
    return found
