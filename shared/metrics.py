"""The counting core of run metrics: per-task tallies, unbiased pass@k and pass^k.

Definitions (per task, `n` = clean trials, i.e. trials with status `scored`, and `c` = successful ones):
- **pass@k** (unbiased, Chen et al. 2021): `1 - C(n-c, k) / C(n, k)` per task, averaged over tasks with
  `n >= k`: the chance that at least one of k trials drawn without replacement succeeds.
- **pass^k** (τ-bench): `C(c, k) / C(n, k)` per task, averaged over tasks with `n >= k`: the chance that all
  k drawn trials succeed.

Best-of-N trials (records with `sample > 0`) are counted apart from single-sample ones (`sample == 0`): the N
samples of one `(task_id, trial)` form one attempt that succeeds if any clean sample succeeded; its tokens
are summed over its clean samples and its turns and tool calls averaged; an attempt whose samples all hit
backend errors is one backend error (a policy error when the policy failed in every one).

This core lives in `shared/` because both sides compute it: the trainer's metrics and reports
(`trainer.metrics`, which adds intervals, k/k and costs) and the environment server's viewer (`/ui`), which
must not import the trainer.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from shared.results import TrialResult, TrialStatus, latest_per_key
from shared.strict_model import StrictModel
from shared.tasks import Split

__all__ = [
    "TaskTally",
    "bootstrap_bounds",
    "default_k",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "pass_at_k",
    "pass_hat_k",
    "tally_tasks",
]


class TaskTally(StrictModel):
    """The trials of one task, counted."""

    task_id: str
    """The task's id."""
    domain: str
    """The task's domain."""
    split: Split
    """The task's split."""
    trials: int = 0
    """Clean (scored) trials `n`."""
    successes: int = 0
    """Successful clean trials `c`."""
    backend_errors: int = 0
    """Trials that ended in a backend error (not in `trials`)."""
    policy_errors: int = 0
    """Trials whose policy endpoint failed, so the model never played (not in `trials`)."""
    tokens_in: int = 0
    """Prompt tokens summed over the clean trials."""
    tokens_out: int = 0
    """Completion tokens summed over the clean trials."""
    turns: float = 0
    """Assistant turns summed over the clean trials."""
    tool_calls: float = 0
    """Tool calls summed over the clean trials."""

    @property
    def pass_rate(self) -> float | None:
        """`c / n`, or None without a clean trial."""
        return self.successes / self.trials if self.trials else None


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: `1 - C(n-c, k) / C(n, k)`.

    Args:
        n: Clean trials.
        c: Successful trials, `0 <= c <= n`.
        k: Trials drawn, `1 <= k <= n`.

    Returns:
        The probability that at least one of k trials drawn without replacement succeeded.

    Raises:
        ValueError: The counts are out of range.
    """
    _check_counts(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: `C(c, k) / C(n, k)`, the probability that all k drawn trials succeeded.

    Args:
        n: Clean trials.
        c: Successful trials, `0 <= c <= n`.
        k: Trials drawn, `1 <= k <= n`.

    Returns:
        The probability that every one of k trials drawn without replacement succeeded.

    Raises:
        ValueError: The counts are out of range.
    """
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"successes must be in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, n={n}], got {k}")


def mean_pass_at_k(tallies: Iterable[TaskTally], k: int) -> float | None:
    """Unbiased pass@k averaged over the tasks with at least k clean trials (None if there are none)."""
    values = [pass_at_k(t.trials, t.successes, k) for t in tallies if t.trials >= k]
    return sum(values) / len(values) if values else None


def mean_pass_hat_k(tallies: Iterable[TaskTally], k: int) -> float | None:
    """pass^k averaged over the tasks with at least k clean trials (None if there are none)."""
    values = [pass_hat_k(t.trials, t.successes, k) for t in tallies if t.trials >= k]
    return sum(values) / len(values) if values else None


def tally_tasks(results: Iterable[TrialResult], *, best_of_n: bool = False) -> list[TaskTally]:
    """Count the clean trials, successes and backend errors of each task.

    Args:
        results: Trial records; of several with one `(task_id, trial, sample)` the last one counts.
        best_of_n: Count best-of-N attempts (`sample > 0`, grouped per trial) instead of single-sample
            trials (`sample == 0`).

    Returns:
        One tally per task, in order of first appearance.
    """
    tallies: dict[str, TaskTally] = {}
    for attempt in _attempts(latest_per_key(results), best_of_n=best_of_n):
        tally = tallies.get(attempt.task_id)
        if tally is None:
            tally = TaskTally(task_id=attempt.task_id, domain=attempt.domain, split=attempt.split)
            tallies[attempt.task_id] = tally
        if attempt.status == "policy_error":
            tally.policy_errors += 1
            continue
        if attempt.reward is None:
            tally.backend_errors += 1
            continue
        tally.trials += 1
        tally.successes += attempt.reward
        tally.tokens_in += attempt.tokens_in
        tally.tokens_out += attempt.tokens_out
        tally.turns += attempt.turns
        tally.tool_calls += attempt.tool_calls
    return list(tallies.values())


class _Attempt(NamedTuple):
    """One attempt at a task: a single-sample trial, or the N samples of a best-of-N trial together."""

    task_id: str
    domain: str
    split: Split
    reward: int | None  # None for a backend or policy error
    tokens_in: int
    tokens_out: int
    turns: float
    tool_calls: float
    status: TrialStatus = "scored"


def _attempts(results: Iterable[TrialResult], *, best_of_n: bool) -> list[_Attempt]:
    if not best_of_n:
        return [
            _Attempt(
                *(r.task_id, r.domain, r.split, r.reward, r.tokens_in, r.tokens_out),
                *(r.turns, r.tool_calls, r.status),
            )
            for r in results
            if r.sample == 0
        ]
    groups: dict[tuple[str, int], list[TrialResult]] = defaultdict(list)
    for r in results:
        if r.sample > 0:
            groups[(r.task_id, r.trial)].append(r)
    attempts = []
    for samples in groups.values():
        first = samples[0]
        clean = [s for s in samples if s.reward is not None]
        if not clean:  # a policy error only when the policy failed in every sample
            status: TrialStatus = (
                "policy_error" if all(s.status == "policy_error" for s in samples) else "backend_error"
            )
            attempts.append(_Attempt(first.task_id, first.domain, first.split, None, 0, 0, 0, 0, status))
            continue
        attempts.append(
            _Attempt(
                first.task_id,
                first.domain,
                first.split,
                reward=max(s.reward or 0 for s in clean),
                tokens_in=sum(s.tokens_in for s in clean),
                tokens_out=sum(s.tokens_out for s in clean),
                turns=sum(s.turns for s in clean) / len(clean),
                tool_calls=sum(s.tool_calls for s in clean) / len(clean),
            )
        )
    return attempts


def default_k(tallies: Iterable[TaskTally]) -> int:
    """The default k: the fewest clean trials of any task that has one (so every task counts), at least 1."""
    return min((t.trials for t in tallies if t.trials), default=1)


def bootstrap_bounds(
    rates: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile-bootstrap interval of the mean of per-task rates, resampling tasks, in plain Python.

    The viewer's interval (the server carries no numpy); `trainer.metrics.bootstrap_interval` computes the
    same statistic with numpy's generator for `groundstate metrics`, so the two bounds agree to within the
    resampling noise (a few tenths of a point), not to the digit.

    Args:
        rates: One success rate per task.
        level: Coverage of the interval.
        resamples: Bootstrap resamples.
        seed: Seed of the resampling, so the same rates always give the same interval.

    Returns:
        `(low, high)`, or None without rates.
    """
    if not rates:
        return None
    rng, n = random.Random(seed), len(rates)
    means = sorted(sum(rng.choices(rates, k=n)) / n for _ in range(resamples))
    tail = (1.0 - level) / 2
    return _quantile(means, tail), _quantile(means, 1.0 - tail)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly (numpy's default method)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
