import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from trainer.results import TrialResult
from trainer.selection import (
    BAND_EDGES,
    Pool,
    SelectionError,
    TaskSelection,
    assign_band,
    jeffreys_posterior,
    parse_bands,
    select_pool,
)


def run_of(
    outcomes: dict[str, list[int | None]], split: str = "train", domain: str = "hotel"
) -> list[TrialResult]:
    """One record per trial; None is a backend error."""
    return [
        TrialResult(
            task_id=task,
            domain=domain,
            split=split,
            trial=i,
            policy="base",
            status="scored" if reward is not None else "backend_error",
            reward=reward,
        )
        for task, rewards in outcomes.items()
        for i, reward in enumerate(rewards)
    ]


def successes(k: int, n: int) -> list[int | None]:
    return [1] * k + [0] * (n - k)


# --- posterior masses --------------------------------------------------------------------------------------


def band_mass(cdf, band: str) -> float:
    low, high = BAND_EDGES[band]
    return cdf(high) - cdf(low)


def test_no_trials_gives_the_arcsine_prior() -> None:
    # Beta(1/2, 1/2): CDF(x) = (2/π) asin(√x); P(too_hard) = (2/π) asin(√0.08) = 0.18256
    p = jeffreys_posterior(0, 0)
    assert p.masses["too_hard"] == pytest.approx(0.18256, abs=1e-5)
    for band in BAND_EDGES:
        assert p.masses[band] == pytest.approx(
            band_mass(lambda x: 2 / math.pi * math.asin(math.sqrt(x)), band)
        )
    assert p.mean == 0.5


def test_one_failure_gives_beta_half_three_halves() -> None:
    # Beta(1/2, 3/2): CDF(x) = (2/π)(asin(√x) + √(x(1−x))); P(too_hard) = 0.35527
    p = jeffreys_posterior(0, 1)
    assert (p.alpha, p.beta) == (0.5, 1.5)
    assert p.masses["too_hard"] == pytest.approx(0.35527, abs=1e-5)
    for band in BAND_EDGES:
        cdf = lambda x: 2 / math.pi * (math.asin(math.sqrt(x)) + math.sqrt(x * (1 - x)))  # noqa: E731
        assert p.masses[band] == pytest.approx(band_mass(cdf, band))


@pytest.mark.parametrize(("k", "n"), [(1, 5), (10, 20), (17, 20), (3, 4)])
def test_band_masses_match_numerical_integration_of_the_density(k: int, n: int) -> None:
    a, b = k + 0.5, n - k + 0.5
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)

    def integral(low: float, high: float, steps: int = 4000) -> float:  # Simpson's rule
        h = (high - low) / steps
        f = [
            math.exp(log_norm + (a - 1) * math.log(x) + (b - 1) * math.log1p(-x)) if 0 < x < 1 else 0.0
            for x in (low + i * h for i in range(steps + 1))
        ]
        return h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    p = jeffreys_posterior(k, n)
    assert sum(p.masses.values()) == pytest.approx(1.0)
    assert p.mean == pytest.approx(a / (a + b))
    for band, (low, high) in BAND_EDGES.items():
        assert p.masses[band] == pytest.approx(integral(low, high), abs=1e-4)


def test_posterior_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="successes must be in"):
        jeffreys_posterior(3, 2)


# --- banding -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "band"),
    [
        (0, 20, "too_hard"),
        (1, 20, "too_hard"),
        (2, 20, "hard"),
        (5, 20, "hard"),
        (10, 20, "medium"),
        (17, 20, "easy"),
        (18, 20, "easy"),
        (20, 20, "too_easy"),
        (2, 4, "medium"),
    ],
)
def test_each_task_goes_to_the_band_with_the_most_posterior_mass(k: int, n: int, band: str) -> None:
    assert assign_band(jeffreys_posterior(k, n)) == band


def test_band_follows_the_mass_not_the_mean() -> None:
    p = jeffreys_posterior(0, 4)  # mean 0.1 lies in "hard", but most of the mass is below 0.08
    assert p.mean == pytest.approx(0.1)
    assert p.masses["too_hard"] == pytest.approx(0.6006, abs=1e-4)
    assert assign_band(p) == "too_hard"


# --- pools -------------------------------------------------------------------------------------------------


def probe_run() -> list[TrialResult]:
    return run_of(
        {
            "never": successes(0, 20),
            "hard": successes(5, 20),
            "medium": successes(10, 20),
            "easy": successes(17, 20),
            "always": successes(20, 20),
            "few": [1, 0, None, None, None, 1],  # 3 clean trials: backend errors are not trials
        }
    ) + run_of({"bench-medium": successes(10, 20)}, split="test")


def test_select_pool_keeps_the_chosen_bands_and_counts_all(tmp_path: Path) -> None:
    out = tmp_path / "pools" / "pool.json"
    pool = select_pool(probe_run(), keep=["hard", "medium"], min_trials=4, out=out)
    assert [t.task_id for t in pool.tasks] == ["hard", "medium"]
    assert [t.band for t in pool.tasks] == ["hard", "medium"]
    assert pool.histogram == {
        "too_hard": 1,
        "hard": 1,
        "medium": 1,
        "easy": 1,
        "too_easy": 1,
        "insufficient": 1,
    }
    assert pool.keep == ["hard", "medium"]
    written = json.loads(out.read_text())
    assert written["tasks"][0]["posterior"]["mean"] == pytest.approx(5.5 / 21)
    assert set(written["tasks"][0]["posterior"]["masses"]) == set(BAND_EDGES)
    assert Pool.read(out) == pool


def test_tasks_below_the_minimum_of_trials_are_insufficient() -> None:
    pool = select_pool(probe_run(), keep=["hard", "medium", "easy"], min_trials=3)
    assert "few" in [t.task_id for t in pool.tasks]  # 2/3 clean: enough at min 3
    pool = select_pool(probe_run(), keep=["too_hard", "hard", "medium", "easy", "too_easy"], min_trials=21)
    assert pool.tasks == []
    assert pool.histogram["insufficient"] == 6


def test_test_split_tasks_never_enter_a_pool() -> None:
    pool = select_pool(probe_run(), keep=["medium"])
    assert [t.task_id for t in pool.tasks] == ["medium"]
    assert pool.excluded_test == ["bench-medium"]
    with pytest.raises(SelectionError, match=r"no train-split task.*test tasks never enter a training pool"):
        select_pool(run_of({"bench": successes(10, 20)}, split="test"))


def test_a_pool_refuses_a_test_task() -> None:
    leaked = TaskSelection(
        task_id="bench", domain="hotel", split="test", trials=20, successes=10, band="medium", posterior=None
    )
    with pytest.raises(ValidationError, match="test-split tasks can never enter a training pool: bench"):
        Pool(keep=["medium"], min_trials=4, tasks=[leaked], histogram={"medium": 1})


def test_unknown_bands_and_bad_minimums_are_refused_with_the_valid_options() -> None:
    assert parse_bands([" hard", "medium "]) == {"hard", "medium"}
    with pytest.raises(SelectionError, match="unknown band 'medum'; valid bands: too_hard, hard, medium"):
        select_pool(probe_run(), keep=["medum"])
    with pytest.raises(SelectionError, match="min_trials must be at least 1"):
        select_pool(probe_run(), min_trials=0)
