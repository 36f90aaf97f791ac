"""Evaluation metrics over the trials of a run: pass@1 with an interval, pass@k, pass^k, k/k, cost.

Definitions (per task, `n` = clean trials, i.e. trials with status `scored`, and `c` = successful ones):
- **pass@1**: the mean over tasks of `c / n`, so every task weighs the same however many trials it has.
  Its 95% interval is a percentile bootstrap over *tasks* (resample tasks with replacement, recompute the
  mean). Trials of one task are strongly correlated (they share the task's difficulty), so a Wilson interval
  over attempts, which treats every attempt as independent, would be too narrow by up to a factor of
  `sqrt(n)`; a Wilson interval over tasks needs one binary outcome per task. The bootstrap respects the
  clustering, stays inside [0, 1], and is seeded so a report is reproducible.
- **pass@k** (unbiased, Chen et al. 2021): `1 - C(n-c, k) / C(n, k)` per task, averaged over tasks with
  `n >= k`: the chance that at least one of k trials drawn without replacement succeeds.
- **pass^k** (τ-bench): `C(c, k) / C(n, k)` per task, averaged over tasks with `n >= k`: the chance that all
  k drawn trials succeed.
- **observed k/k**: the number of tasks with at least k clean trials *every one of which* succeeded; its rate
  divides by the tasks with at least k clean trials.
- **solved at least once**: tasks with `c >= 1`, out of the tasks with at least one clean trial.
- **backend errors** are left out of every denominator and counted apart, as are tasks that have no clean
  trial at all. Means (turns, tool calls, tokens) are per clean trial.
- **cost**: per trial `tokens_in * price_in / 1e6 + tokens_out * price_out / 1e6` (prices per 1M tokens),
  summed over clean trials; per successful attempt it divides by the successes, per reliable task by the
  observed k/k count.

Best-of-N trials (records with `sample > 0`) are reported apart from single-sample ones (`sample == 0`). The
N samples of one `(task_id, trial)` form one attempt that succeeds if any clean sample succeeded (the
environment's reward is the oracle verifier); its tokens are summed over its clean samples (the cost of the
attempt) and its turns and tool calls averaged; an attempt whose samples all hit backend errors is one
backend error.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shared.tasks import Split
from trainer.results import TrialResult, latest_per_key

__all__ = [
    "Cost",
    "GroupMetrics",
    "Interval",
    "Metrics",
    "Pricing",
    "TaskTally",
    "bootstrap_interval",
    "compute_metrics",
    "default_k",
    "group_metrics",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "pass_at_k",
    "pass_hat_k",
    "tally_tasks",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Pricing(_Model):
    """Token prices of the policy, in currency units per one million tokens."""

    price_in_per_1m: float = Field(ge=0)
    """Price of one million prompt (input) tokens."""
    price_out_per_1m: float = Field(ge=0)
    """Price of one million completion (output) tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """The price of the given token counts."""
        return (tokens_in * self.price_in_per_1m + tokens_out * self.price_out_per_1m) / 1_000_000


class Interval(_Model):
    """A confidence interval."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""


class Cost(_Model):
    """What the clean trials of a group cost at the given prices."""

    total: float
    """Cost of all clean trials."""
    per_attempt: float | None
    """Mean cost of one clean trial."""
    per_success: float | None
    """Total cost divided by the successful trials; null when none succeeded."""
    per_reliable_task: float | None
    """Total cost divided by the observed k/k tasks; null when there are none."""


class TaskTally(_Model):
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


class GroupMetrics(_Model):
    """The metrics of one group of tasks (the whole run or one domain); see the module docstring."""

    tasks: int
    """Tasks with at least one clean trial (the denominator of the per-task rates)."""
    trials: int
    """Clean trials (backend errors excluded)."""
    successes: int
    """Clean trials with reward 1."""
    backend_errors: int
    """Trials that ended in a backend error."""
    tasks_without_clean_trials: int
    """Tasks whose every trial was a backend error (left out of `tasks`)."""
    pass_at_1: float | None = Field(serialization_alias="pass@1")
    """Mean over tasks of the success rate."""
    pass_at_1_ci95: Interval | None = Field(serialization_alias="pass@1_ci95")
    """95% percentile-bootstrap interval of pass@1, resampling tasks."""
    k: int
    """The k of pass@k, pass^k and observed k/k."""
    tasks_with_k_trials: int
    """Tasks with at least k clean trials (the denominator of pass@k, pass^k and the k/k rate)."""
    pass_at_k: float | None = Field(serialization_alias="pass@k")
    """Unbiased pass@k averaged over tasks with at least k clean trials."""
    pass_hat_k: float | None = Field(serialization_alias="pass^k")
    """pass^k averaged over tasks with at least k clean trials."""
    observed_k_of_k: int
    """Tasks with at least k clean trials, every one of them successful."""
    observed_k_of_k_rate: float | None
    """`observed_k_of_k / tasks_with_k_trials`."""
    solved_at_least_once: int
    """Tasks with at least one successful clean trial."""
    solved_at_least_once_rate: float | None
    """`solved_at_least_once / tasks`."""
    mean_turns: float | None
    """Assistant turns per clean trial."""
    mean_tool_calls: float | None
    """Tool calls per clean trial."""
    mean_tokens_in: float | None
    """Prompt tokens per clean trial."""
    mean_tokens_out: float | None
    """Completion tokens per clean trial."""
    cost: Cost | None = None
    """Costs at the given prices; null when no prices were given."""

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict whose keys use the metric names (`pass@1`, `pass@k`, `pass^k`, …)."""
        return self.model_dump(mode="json", by_alias=True)


class Metrics(GroupMetrics):
    """The metrics of a run: overall, per domain, and (apart) for best-of-N trials."""

    by_domain: dict[str, GroupMetrics]
    """The same metrics per domain, with the run's k."""
    samples_per_trial: int | None = None
    """N for the best-of-N section (the largest sample index); null for single-sample metrics."""
    best_of_n: Metrics | None = None
    """Metrics of the best-of-N trials (`sample > 0`); null when the run has none."""


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


def bootstrap_interval(
    rates: Sequence[float], *, level: float = 0.95, resamples: int = 5000, seed: int = 0
) -> Interval | None:
    """Percentile-bootstrap interval of the mean of per-task rates, resampling tasks with replacement.

    Args:
        rates: One success rate per task.
        level: Coverage of the interval.
        resamples: Bootstrap resamples.
        seed: Seed of the resampling, so the same rates always give the same interval.

    Returns:
        The interval, or None without rates.
    """
    if not rates:
        return None
    values = np.asarray(rates, dtype=float)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // len(values))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        means[start:stop] = values[rng.integers(0, len(values), size=(stop - start, len(values)))].mean(
            axis=1
        )
    tail = (1.0 - level) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(low=float(low), high=float(high))


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
    reward: int | None  # None for a backend error
    tokens_in: int
    tokens_out: int
    turns: float
    tool_calls: float


def _attempts(results: Iterable[TrialResult], *, best_of_n: bool) -> list[_Attempt]:
    if not best_of_n:
        return [
            _Attempt(r.task_id, r.domain, r.split, r.reward, r.tokens_in, r.tokens_out, r.turns, r.tool_calls)
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
        if not clean:
            attempts.append(_Attempt(first.task_id, first.domain, first.split, None, 0, 0, 0, 0))
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


def group_metrics(
    tallies: Sequence[TaskTally],
    *,
    k: int,
    pricing: Pricing | None = None,
    resamples: int = 5000,
    seed: int = 0,
) -> GroupMetrics:
    """The metrics of one group of task tallies; see the module docstring for the definitions.

    Args:
        tallies: The tasks of the group.
        k: The k of pass@k, pass^k and observed k/k (>= 1).
        pricing: Token prices; without them `cost` is null.
        resamples: Bootstrap resamples of the pass@1 interval.
        seed: Bootstrap seed.

    Returns:
        The group's metrics.

    Raises:
        ValueError: k is below 1.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    clean = [t for t in tallies if t.trials]
    rates = [t.successes / t.trials for t in clean]
    with_k = [t for t in clean if t.trials >= k]
    reliable = sum(1 for t in with_k if t.successes == t.trials)
    solved = sum(1 for t in clean if t.successes)
    trials = sum(t.trials for t in clean)
    successes = sum(t.successes for t in clean)
    cost = None
    if pricing is not None:
        total = sum(pricing.cost(t.tokens_in, t.tokens_out) for t in clean)
        cost = Cost(
            total=total,
            per_attempt=_ratio(total, trials),
            per_success=_ratio(total, successes),
            per_reliable_task=_ratio(total, reliable),
        )
    return GroupMetrics(
        tasks=len(clean),
        trials=trials,
        successes=successes,
        backend_errors=sum(t.backend_errors for t in tallies),
        tasks_without_clean_trials=len(tallies) - len(clean),
        pass_at_1=_ratio(sum(rates), len(rates)),
        pass_at_1_ci95=bootstrap_interval(rates, resamples=resamples, seed=seed),
        k=k,
        tasks_with_k_trials=len(with_k),
        pass_at_k=mean_pass_at_k(with_k, k),
        pass_hat_k=mean_pass_hat_k(with_k, k),
        observed_k_of_k=reliable,
        observed_k_of_k_rate=_ratio(reliable, len(with_k)),
        solved_at_least_once=solved,
        solved_at_least_once_rate=_ratio(solved, len(clean)),
        mean_turns=_ratio(sum(t.turns for t in clean), trials),
        mean_tool_calls=_ratio(sum(t.tool_calls for t in clean), trials),
        mean_tokens_in=_ratio(sum(t.tokens_in for t in clean), trials),
        mean_tokens_out=_ratio(sum(t.tokens_out for t in clean), trials),
        cost=cost,
    )


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def compute_metrics(
    results: Iterable[TrialResult],
    *,
    k: int | None = None,
    pricing: Pricing | None = None,
    resamples: int = 5000,
    seed: int = 0,
) -> Metrics:
    """Compute the metrics of a run, overall and per domain, with best-of-N trials reported apart.

    Args:
        results: The run's records; of several with one `(task_id, trial, sample)` the last one counts.
        k: The k of pass@k, pass^k and observed k/k; by default the fewest clean trials of any task (for the
            best-of-N section, of any best-of-N task).
        pricing: Token prices for the cost figures; without them `cost` is null.
        resamples: Bootstrap resamples of the pass@1 interval.
        seed: Bootstrap seed.

    Returns:
        The run's metrics.
    """
    records = list(results)
    metrics = _metrics_of(tally_tasks(records), k=k, pricing=pricing, resamples=resamples, seed=seed)
    if any(r.sample > 0 for r in records):
        best = _metrics_of(
            tally_tasks(records, best_of_n=True), k=k, pricing=pricing, resamples=resamples, seed=seed
        )
        best.samples_per_trial = max(r.sample for r in records)
        metrics.best_of_n = best
    return metrics


def _metrics_of(
    tallies: Sequence[TaskTally], *, k: int | None, pricing: Pricing | None, resamples: int, seed: int
) -> Metrics:
    k = default_k(tallies) if k is None else k
    by_domain: dict[str, list[TaskTally]] = defaultdict(list)
    for tally in tallies:
        by_domain[tally.domain].append(tally)
    overall = group_metrics(tallies, k=k, pricing=pricing, resamples=resamples, seed=seed)
    return Metrics(
        **dict(overall),
        by_domain={
            domain: group_metrics(group, k=k, pricing=pricing, resamples=resamples, seed=seed)
            for domain, group in sorted(by_domain.items())
        },
    )
