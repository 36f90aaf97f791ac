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

The counting core (task tallies, pass@k, pass^k, best-of-N attempts) is `shared.metrics`, which the
server's viewer uses too; it is re-exported here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from shared.metrics import (
    TaskTally,
    default_k,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    tally_tasks,
)
from shared.results import grading_conflicts
from shared.strict_model import StrictModel
from trainer.results import TrialResult

__all__ = [
    "Cost",
    "GroupMetrics",
    "Interval",
    "Metrics",
    "MixedGradingError",
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


class Pricing(StrictModel):
    """Token prices of the policy, in currency units per one million tokens."""

    price_in_per_1m: float = Field(ge=0)
    """Price of one million prompt (input) tokens."""
    price_out_per_1m: float = Field(ge=0)
    """Price of one million completion (output) tokens."""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """The price of the given token counts."""
        return (tokens_in * self.price_in_per_1m + tokens_out * self.price_out_per_1m) / 1_000_000


class Interval(StrictModel):
    """A confidence interval."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""


class Cost(StrictModel):
    """What the clean trials of a group cost at the given prices."""

    total: float
    """Cost of all clean trials."""
    per_attempt: float | None
    """Mean cost of one clean trial."""
    per_success: float | None
    """Total cost divided by the successful trials; null when none succeeded."""
    per_reliable_task: float | None
    """Total cost divided by the observed k/k tasks; null when there are none."""


class GroupMetrics(StrictModel):
    """The metrics of one group of tasks (the whole run or one domain); see the module docstring."""

    tasks: int
    """Tasks with at least one clean trial (the denominator of the per-task rates)."""
    trials: int
    """Clean trials (backend errors excluded)."""
    successes: int
    """Clean trials with reward 1."""
    backend_errors: int
    """Trials that ended in a backend error."""
    policy_errors: int = 0
    """Trials whose policy endpoint failed (the model never played); excluded like backend errors."""
    tasks_without_clean_trials: int
    """Tasks whose every trial was a backend or policy error (left out of `tasks`)."""
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
    without_user_failures: Metrics | None = None
    """The same metrics with the failures blamed on the simulated user (`TrialResult.blame == "user"`) left
    out of every denominator, like backend errors; null when no failure is blamed on the user."""


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
        policy_errors=sum(t.policy_errors for t in tallies),
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


class MixedGradingError(ValueError):
    """The results were graded against different tasks, scorers or judges and were not allowed to pool."""

    def __init__(self, conflicts: list[str]) -> None:
        self.conflicts = conflicts
        super().__init__(
            "the results were graded against different versions, so their rewards do not compare: "
            + "; ".join(conflicts)
            + " (re-score them with `groundstate regrade RUN`, or pool them anyway with "
            "--pool-grading-versions)"
        )


def compute_metrics(
    results: Iterable[TrialResult],
    *,
    k: int | None = None,
    pricing: Pricing | None = None,
    resamples: int = 5000,
    seed: int = 0,
    pool_grading_versions: bool = False,
) -> Metrics:
    """Compute the metrics of a run, overall and per domain, with best-of-N trials reported apart.

    Args:
        results: The run's records; of several with one `(task_id, trial, sample)` the last one counts.
        k: The k of pass@k, pass^k and observed k/k; by default the fewest clean trials of any task (for the
            best-of-N section, of any best-of-N task).
        pricing: Token prices for the cost figures; without them `cost` is null.
        resamples: Bootstrap resamples of the pass@1 interval.
        seed: Bootstrap seed.
        pool_grading_versions: Pool results graded against different versions (a task corrected, the
            scorer or the judge changed between trials) instead of refusing; their rewards do not compare.

    Returns:
        The run's metrics.

    Raises:
        MixedGradingError: The results carry different grading versions and `pool_grading_versions` is off.
    """
    records = list(results)
    if not pool_grading_versions:
        conflicts = grading_conflicts(records)
        if conflicts:
            raise MixedGradingError(conflicts)
    metrics = _metrics_of(tally_tasks(records), k=k, pricing=pricing, resamples=resamples, seed=seed)
    if any(r.blame == "user" for r in records):
        agents = [r for r in records if r.blame != "user"]
        metrics.without_user_failures = _metrics_of(
            tally_tasks(agents), k=metrics.k, pricing=pricing, resamples=resamples, seed=seed
        )
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
