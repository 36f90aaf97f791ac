"""Policy-relative difficulty selection: Jeffreys posteriors over probe trials, difficulty bands, pools.

Probe the base policy n times per task; with k successes among the n clean trials the posterior of the task's
success rate under the Jeffreys prior Beta(1/2, 1/2) is Beta(k + 1/2, n - k + 1/2). Each task goes to the band
holding the most posterior mass:

    too_hard [0, 0.08)   hard [0.08, 0.40)   medium [0.40, 0.60)   easy [0.60, 0.90)   too_easy [0.90, 1]

A task with fewer clean trials than the minimum is `insufficient` and never kept. Tasks of split `test` (the
benchmark) never enter a training pool: `select_pool` leaves them out and lists them in the pool's
`excluded_test`, and a `Pool` refuses to hold one.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, get_args

from pydantic import Field, model_validator
from scipy.stats import beta as beta_dist

from shared.strict_model import StrictModel
from shared.tasks import Split
from trainer.metrics import TaskTally, tally_tasks
from trainer.results import TrialResult

__all__ = [
    "ASSESSMENTS",
    "BANDS",
    "BAND_EDGES",
    "DEFAULT_MIN_TRIALS",
    "Assessment",
    "Band",
    "Pool",
    "Posterior",
    "SelectionError",
    "TaskSelection",
    "assign_band",
    "band_of",
    "jeffreys_posterior",
    "parse_bands",
    "select_pool",
]

Band = Literal["too_hard", "hard", "medium", "easy", "too_easy"]
BANDS: tuple[Band, ...] = get_args(Band)
BAND_EDGES: dict[Band, tuple[float, float]] = {
    "too_hard": (0.0, 0.08),
    "hard": (0.08, 0.40),
    "medium": (0.40, 0.60),
    "easy": (0.60, 0.90),
    "too_easy": (0.90, 1.0),
}
"""Each band's `[low, high)` interval of the success rate (the last one includes 1)."""
DEFAULT_MIN_TRIALS = 4
"""Fewer clean probe trials than this leave a task `insufficient`."""

Assessment = Literal["too_hard", "hard", "medium", "easy", "too_easy", "insufficient"]
"""A band, or `insufficient` for a task with too few clean trials to band."""
ASSESSMENTS: tuple[Assessment, ...] = get_args(Assessment)


class SelectionError(ValueError):
    """A selection request that cannot be honoured (unknown band, a test task in a pool, no train task)."""


class Posterior(StrictModel):
    """The Jeffreys posterior Beta(alpha, beta) of one task's success rate."""

    alpha: float
    """`successes + 1/2`."""
    beta: float
    """`failures + 1/2`."""
    mean: float
    """Posterior mean `alpha / (alpha + beta)`."""
    masses: dict[Band, float]
    """Posterior probability of each band's interval; they sum to 1."""


class TaskSelection(StrictModel):
    """One task's difficulty assessment."""

    task_id: str
    """The task's id."""
    domain: str
    """The task's domain."""
    split: Split
    """The task's split."""
    trials: int
    """Clean probe trials n."""
    successes: int
    """Successful probe trials k."""
    band: Assessment
    """The band with the most posterior mass, or `insufficient` below the minimum of trials."""
    posterior: Posterior | None
    """The posterior; null when the task is `insufficient`."""


class Pool(StrictModel):
    """A training pool: the kept tasks with their bands, and how all probed train tasks were banded."""

    keep: list[Band]
    """The bands that were kept."""
    min_trials: int
    """The minimum of clean trials a task needed to be banded."""
    tasks: list[TaskSelection]
    """The kept tasks (train split only)."""
    histogram: dict[Assessment, int]
    """Number of probed train tasks per band, `insufficient` included."""
    excluded_test: list[str] = Field(default_factory=list)
    """Ids of test-split tasks found in the results and left out: the benchmark never trains."""

    @model_validator(mode="after")
    def _no_test_tasks(self) -> Pool:
        leaked = [t.task_id for t in self.tasks if t.split == "test"]
        if leaked:
            raise ValueError(f"test-split tasks can never enter a training pool: {', '.join(leaked)}")
        return self

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the pool as one JSON document and return its path (parent directories are created)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.model_dump_json(indent=2) + "\n")
        return target

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Pool:
        """Read a pool written by `write`."""
        return cls.model_validate_json(Path(path).read_text())


def jeffreys_posterior(successes: int, trials: int) -> Posterior:
    """The Jeffreys posterior Beta(k + 1/2, n - k + 1/2) and its mass in each band.

    Args:
        successes: k, the successful clean trials.
        trials: n, the clean trials.

    Returns:
        The posterior with its mean and band masses.

    Raises:
        ValueError: Not `0 <= successes <= trials`.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, trials={trials}], got {successes}")
    alpha, beta = successes + 0.5, trials - successes + 0.5
    cdf = beta_dist(alpha, beta).cdf
    masses = {band: float(cdf(high) - cdf(low)) for band, (low, high) in BAND_EDGES.items()}
    return Posterior(alpha=alpha, beta=beta, mean=alpha / (alpha + beta), masses=masses)


def assign_band(posterior: Posterior) -> Band:
    """The band with the most posterior mass (an exact tie goes to the harder band)."""
    return max(BANDS, key=lambda band: (posterior.masses[band], -BANDS.index(band)))


def band_of(tally: TaskTally, *, min_trials: int = DEFAULT_MIN_TRIALS) -> TaskSelection:
    """Assess one task from its clean trials.

    Args:
        tally: The task's counted trials (backend errors already left out).
        min_trials: Fewer clean trials than this make the task `insufficient`.

    Returns:
        The task's band and posterior.
    """
    posterior = jeffreys_posterior(tally.successes, tally.trials) if tally.trials >= min_trials else None
    return TaskSelection(
        task_id=tally.task_id,
        domain=tally.domain,
        split=tally.split,
        trials=tally.trials,
        successes=tally.successes,
        band=assign_band(posterior) if posterior else "insufficient",
        posterior=posterior,
    )


def parse_bands(names: Iterable[str]) -> set[Band]:
    """Validate band names.

    Args:
        names: Band names, e.g. `["hard", "medium"]`.

    Returns:
        The bands.

    Raises:
        SelectionError: A name is not a band (the message lists the valid ones).
    """
    bands: set[Band] = set()
    for name in names:
        band = next((b for b in BANDS if b == name.strip()), None)
        if band is None:
            raise SelectionError(f"unknown band {name.strip()!r}; valid bands: {', '.join(BANDS)}")
        bands.add(band)
    return bands


def select_pool(
    results: Iterable[TrialResult],
    *,
    keep: Iterable[str] = ("hard", "medium"),
    min_trials: int = DEFAULT_MIN_TRIALS,
    out: str | os.PathLike[str] | None = None,
) -> Pool:
    """Band every probed train task and keep those in the chosen bands.

    Only single-sample trials count (`sample == 0`); backend errors are not trials. Test-split tasks are left
    out (listed in `excluded_test`).

    Args:
        results: The probe run's records; of several with one `(task_id, trial, sample)` the last counts.
        keep: The bands to keep.
        min_trials: The minimum of clean trials to band a task (at least 1).
        out: If given, the pool is also written there as JSON.

    Returns:
        The pool.

    Raises:
        SelectionError: An unknown band, `min_trials < 1`, or results without any train-split task.
    """
    bands = parse_bands(keep)
    if min_trials < 1:
        raise SelectionError(f"min_trials must be at least 1, got {min_trials}")
    tallies = tally_tasks(results)
    excluded = [t.task_id for t in tallies if t.split == "test"]
    train = [t for t in tallies if t.split == "train"]
    if not train:
        raise SelectionError(
            f"no train-split task in the results ({len(excluded)} test-split tasks found); test tasks "
            "never enter a training pool"
        )
    assessed = [band_of(t, min_trials=min_trials) for t in train]
    counts = Counter(a.band for a in assessed)
    pool = Pool(
        keep=[b for b in BANDS if b in bands],
        min_trials=min_trials,
        tasks=[a for a in assessed if a.band in bands],
        histogram={band: counts.get(band, 0) for band in ASSESSMENTS},
        excluded_test=excluded,
    )
    if out is not None:
        pool.write(out)
    return pool
