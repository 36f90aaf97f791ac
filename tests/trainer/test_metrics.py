import json
import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from pydantic import ValidationError

from trainer.metrics import (
    Pricing,
    bootstrap_interval,
    compute_metrics,
    pass_at_k,
    pass_hat_k,
    tally_tasks,
)
from trainer.results import CheckOutcome, DiffEntry, TrialResult, append_result, read_results


def make_result(task_id: str = "t-1", reward: int | None = 1, **fields: object) -> TrialResult:
    data: dict[str, object] = {
        "task_id": task_id,
        "domain": "hotel",
        "split": "test",
        "trial": 0,
        "policy": "p",
        "status": "scored" if reward is not None else "backend_error",
        "reward": reward,
    }
    data.update(fields)
    return TrialResult.model_validate(data)


def run_of(outcomes: dict[str, list[int | None]], **fields: object) -> list[TrialResult]:
    """One record per trial; None is a backend error."""
    return [
        make_result(task, reward, trial=i, **fields)
        for task, rewards in outcomes.items()
        for i, reward in enumerate(rewards)
    ]


# --- per-task estimators ---------------------------------------------------------------------------------


def test_pass_at_k_and_pass_hat_k_match_hand_computed_values() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert pass_at_k(5, 2, 1) == pytest.approx(2 / 5)
    assert pass_hat_k(5, 2, 1) == pytest.approx(2 / 5)
    assert pass_at_k(5, 2, 4) == 1.0  # any 4 of 5 include a success
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_at_k(5, 0, 3) == 0.0


def test_estimators_stay_exact_for_large_counts() -> None:
    assert pass_hat_k(200, 100, 100) == pytest.approx(1 / math.comb(200, 100))
    assert pass_at_k(200, 1, 199) == pytest.approx(1 - 1 / 200)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_estimators_reject_out_of_range_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="must be in"):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match="must be in"):
        pass_hat_k(n, c, k)


# --- run metrics -------------------------------------------------------------------------------------------


def small_run() -> list[TrialResult]:
    hotel = run_of({"a": [1, 1, 1, 1], "b": [1, 0, None, 0, 0]}, tokens_in=1000, tokens_out=100, turns=4)
    retail = run_of(
        {"c": [0, 1], "d": [None, None]},
        domain="retail",
        tokens_in=1000,
        tokens_out=100,
        turns=2,
        tool_calls=3,
    )
    # backend errors burn tokens that must not count
    return [r.model_copy(update={"tokens_in": 5000}) if r.reward is None else r for r in hotel + retail]


def test_metrics_of_a_small_run_match_hand_computed_values() -> None:
    m = compute_metrics(small_run(), pricing=Pricing(price_in_per_1m=2.0, price_out_per_1m=8.0))
    assert (m.tasks, m.trials, m.successes, m.backend_errors, m.tasks_without_clean_trials) == (
        3,
        10,
        6,
        3,
        1,
    )
    assert m.pass_at_1 == pytest.approx((1 + 0.25 + 0.5) / 3)
    assert m.k == 2  # the fewest clean trials of a task (c has 2)
    assert m.tasks_with_k_trials == 3
    assert m.pass_at_k == pytest.approx((1 + (1 - 3 / 6) + 1) / 3)
    assert m.pass_hat_k == pytest.approx((1 + 0 + 0) / 3)
    assert (m.observed_k_of_k, m.observed_k_of_k_rate) == (1, pytest.approx(1 / 3))
    assert (m.solved_at_least_once, m.solved_at_least_once_rate) == (3, 1.0)
    assert m.mean_tokens_in == 1000
    assert m.mean_turns == pytest.approx((8 * 4 + 2 * 2) / 10)
    assert m.mean_tool_calls == pytest.approx(2 * 3 / 10)
    assert m.cost is not None
    assert m.cost.total == pytest.approx(10 * (1000 * 2 + 100 * 8) / 1e6)
    assert m.cost.per_success == pytest.approx(0.028 / 6)
    assert m.cost.per_reliable_task == pytest.approx(0.028)
    hotel, retail = m.by_domain["hotel"], m.by_domain["retail"]
    assert (hotel.tasks, hotel.pass_at_1, hotel.backend_errors, hotel.k) == (2, pytest.approx(0.625), 1, 2)
    assert (retail.tasks, retail.pass_at_1, retail.tasks_without_clean_trials) == (1, 0.5, 1)
    assert m.best_of_n is None


def test_explicit_k_counts_only_tasks_with_k_clean_trials() -> None:
    m = compute_metrics(small_run(), k=4)
    assert m.tasks_with_k_trials == 2
    assert m.pass_at_k == pytest.approx((1 + 1) / 2)
    assert m.pass_hat_k == pytest.approx((1 + 0) / 2)
    assert (m.observed_k_of_k, m.observed_k_of_k_rate) == (1, 0.5)
    assert m.cost is None


def test_a_rerun_replaces_the_earlier_record_of_its_trial() -> None:
    m = compute_metrics([*run_of({"a": [0, None]}), make_result("a", 1, trial=1)])
    assert (m.trials, m.successes, m.backend_errors) == (2, 1, 0)


def test_pass_at_1_weighs_tasks_equally() -> None:
    m = compute_metrics(run_of({"a": [1] * 9 + [0], "b": [0]}))
    assert m.pass_at_1 == pytest.approx((0.9 + 0.0) / 2)


def test_as_json_uses_metric_names() -> None:
    data = compute_metrics(small_run()).as_json()
    for key in ("pass@1", "pass@k", "pass^k", "observed_k_of_k", "solved_at_least_once", "tasks", "trials"):
        assert key in data
        assert key in data["by_domain"]["hotel"]
    assert data["backend_errors"] == 3
    assert data["observed_k_of_k"] == 1
    assert set(data["pass@1_ci95"]) == {"low", "high"}
    json.dumps(data)


def test_empty_run_has_no_rates() -> None:
    m = compute_metrics([])
    assert (m.tasks, m.trials, m.pass_at_1, m.pass_at_1_ci95, m.pass_at_k, m.k) == (0, 0, None, None, None, 1)


def test_best_of_n_is_reported_apart_and_succeeds_if_any_sample_did() -> None:
    single = run_of({"a": [0, 0]})
    best = [
        make_result("a", reward, trial=trial, sample=sample, tokens_in=10)
        for trial, rewards in enumerate([[0, 1, 0], [0, 0, 0], [None, None, None], [None, 1, None]])
        for sample, reward in enumerate(rewards, start=1)
    ]
    m = compute_metrics(single + best)
    assert (m.trials, m.pass_at_1) == (2, 0.0)
    assert m.best_of_n is not None
    b = m.best_of_n
    assert b.samples_per_trial == 3
    assert (b.trials, b.successes, b.backend_errors) == (3, 2, 1)
    assert b.pass_at_1 == pytest.approx(2 / 3)
    assert b.mean_tokens_in == pytest.approx((30 + 30 + 10) / 3)  # tokens of the clean samples, summed


# --- the published ThinkingBox-Bench figures ---------------------------------------------------------------


def thinkingbox_run(successes: int, perfect: int, solved: int, tasks: int = 507, trials: int = 20) -> list:
    partial = solved - perfect
    remaining = successes - perfect * trials - partial
    counts = [trials] * perfect + [0] * (tasks - solved)
    extra = []
    for _ in range(partial):
        extra.append(min(trials - 2, remaining))
        remaining -= extra[-1]
    assert remaining == 0
    counts += [1 + e for e in extra]
    return run_of({f"t-{i}": [1] * c + [0] * (trials - c) for i, c in enumerate(counts)})


@pytest.mark.parametrize(
    ("successes", "perfect", "solved", "pass1", "k_of_k", "once"),
    [(5242, 38, 453, "51.70", "7.50", "89.35"), (6163, 107, 446, "60.78", "21.10", "87.97")],
)
def test_thinkingbox_bench_figures_are_reproduced(
    successes: int, perfect: int, solved: int, pass1: str, k_of_k: str, once: str
) -> None:
    m = compute_metrics(thinkingbox_run(successes, perfect, solved), resamples=500)
    assert (m.tasks, m.trials, m.successes, m.k) == (507, 10140, successes, 20)
    assert f"{m.pass_at_1 * 100:.2f}" == pass1
    assert m.observed_k_of_k == perfect
    assert f"{m.observed_k_of_k_rate * 100:.2f}" == k_of_k
    assert m.solved_at_least_once == solved
    assert f"{m.solved_at_least_once_rate * 100:.2f}" == once
    # with k = n, pass^k is the k/k rate and pass@k the solved-at-least-once rate
    assert m.pass_hat_k == pytest.approx(m.observed_k_of_k_rate)
    assert m.pass_at_k == pytest.approx(m.solved_at_least_once_rate)
    assert m.pass_at_1_ci95 is not None
    assert m.pass_at_1_ci95.low < m.pass_at_1 < m.pass_at_1_ci95.high


# --- the bootstrap interval --------------------------------------------------------------------------------


def test_bootstrap_interval_is_degenerate_for_identical_tasks() -> None:
    ci = bootstrap_interval([0.5] * 40)
    assert ci is not None
    assert (ci.low, ci.high) == (pytest.approx(0.5), pytest.approx(0.5))
    assert bootstrap_interval([]) is None


def test_bootstrap_interval_matches_the_normal_approximation_over_tasks() -> None:
    rates = [0.0, 1.0] * 200  # mean 0.5, population sd 0.5, 400 tasks: 0.5 ± 1.96 * 0.5 / 20
    ci = bootstrap_interval(rates, resamples=20000, seed=1)
    assert ci is not None
    assert ci.low == pytest.approx(0.5 - 0.049, abs=0.004)
    assert ci.high == pytest.approx(0.5 + 0.049, abs=0.004)
    assert bootstrap_interval(rates, seed=3) == bootstrap_interval(rates, seed=3)


# --- the results file (read by the metrics) ----------------------------------------------------------------


def test_append_and_read_round_trip_with_latest_record_winning(tmp_path: Path) -> None:
    first = make_result("a", 0, diff=[DiffEntry(kind="wrong", table="bookings", key="BK-1", column="status")])
    other = make_result("b", 1)
    rerun = make_result(
        "a", 1, failed_checks=[CheckOutcome(name="rubric:0", passed=True, detail="ok")], latency_s=1.5
    )
    for result in (first, other, rerun):
        append_result(tmp_path, result)
    assert read_results(tmp_path) == [rerun, other]
    assert read_results(tmp_path / "results.jsonl") == [rerun, other]


def test_read_tolerates_a_torn_last_line_and_append_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    append_result(path, make_result("a", 1))
    with path.open("a") as fh:
        fh.write(make_result("b", 1).model_dump_json()[:40])  # a writer killed mid-line
    assert [r.task_id for r in read_results(path)] == ["a"]
    append_result(path, make_result("c", 0))
    assert [r.task_id for r in read_results(path)] == ["a", "c"]


def append_many(path: Path, writer: int) -> None:
    for trial in range(50):
        append_result(path, make_result(f"w{writer}", 1, trial=trial, error="x" * 20_000))


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with ProcessPoolExecutor(max_workers=4) as pool:
        list(pool.map(append_many, [path] * 4, range(4)))
    assert len(path.read_text().splitlines()) == 200
    assert len(read_results(path)) == 200


def test_read_rejects_a_json_line_that_is_not_a_result(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    append_result(path, make_result("a", 1))
    with path.open("a") as fh:
        fh.write(json.dumps({"task_id": "b", "reward": 1}) + "\n")
    with pytest.raises(ValueError, match=r"results\.jsonl:2: not a valid TrialResult"):
        read_results(path)


def test_read_of_a_run_without_results_names_the_expected_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"results\.jsonl"):
        read_results(tmp_path)


@pytest.mark.parametrize(("status", "reward"), [("scored", None), ("backend_error", 1), ("scored", 2)])
def test_reward_must_match_status(status: str, reward: int | None) -> None:
    fields = {"task_id": "a", "domain": "hotel", "split": "test", "trial": 0, "policy": "p"}
    with pytest.raises(ValidationError):
        TrialResult.model_validate({**fields, "status": status, "reward": reward})


def test_tally_counts_backend_errors_apart() -> None:
    (tally,) = tally_tasks(run_of({"a": [1, None, 0, None]}))
    assert (tally.trials, tally.successes, tally.backend_errors, tally.pass_rate) == (2, 1, 2, 0.5)


# --- grading versions ------------------------------------------------------------------------------------


def graded(task_fingerprint: str = "f1", scorer: str = "scorer-v1", judge: str = "") -> dict[str, object]:
    return {
        "grading": {
            "task_fingerprint": task_fingerprint,
            "domain_fingerprint": "d1",
            "scorer_version": scorer,
            "judge_model": judge,
            "judge_prompt_version": "judge-v1" if judge else "",
        }
    }


def test_metrics_refuse_results_of_different_grading_versions_unless_told() -> None:
    from trainer.metrics import MixedGradingError

    before = run_of({"t-1": [0, 0]}, **graded("old"))
    after = [make_result("t-1", 1, trial=2, **graded("new")), make_result("t-2", 1, **graded("other"))]
    with pytest.raises(MixedGradingError, match=r"fingerprints of task t-1 differ: new \(1\), old \(2\)"):
        compute_metrics(before + after)
    pooled = compute_metrics(before + after, pool_grading_versions=True)
    assert pooled.tasks == 2  # told to: pooled, tasks with their own fingerprint never conflict
    assert compute_metrics(run_of({"t-1": [1, 0], "t-2": [1]}, **graded())).tasks == 2


def test_a_scorer_or_judge_change_and_ungraded_results_conflict_but_errors_do_not() -> None:
    from trainer.results import grading_conflicts

    v1 = make_result("t-1", 1, **graded())
    assert grading_conflicts([v1, make_result("t-2", 0, **graded(scorer="scorer-v2"))]) == [
        "scorer versions differ: scorer-v1 (1), scorer-v2 (1)"
    ]
    judged = [make_result(f"t-{i}", 1, **graded(judge=m)) for i, m in enumerate(["a", "b"])]
    assert grading_conflicts(judged) == ["judges (model / prompt) differ: a / judge-v1 (1), b / judge-v1 (1)"]
    assert grading_conflicts([v1, make_result("t-2", 0)]) == [
        "1 of 2 scored results carry no grading version (written before grading versions existed)"
    ]
    assert grading_conflicts([v1, make_result("t-2", None)]) == []  # a backend error has no grading
    assert grading_conflicts([make_result("t-1", 1), make_result("t-2", 0)]) == []  # all legacy: pooled


def test_metrics_cli_says_why_it_refuses_and_pools_when_told(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trainer.cli import app

    for record in [make_result("t-1", 0, **graded("old")), make_result("t-1", 1, trial=1, **graded("new"))]:
        append_result(tmp_path, record)
    refused = CliRunner().invoke(app, ["metrics", str(tmp_path), "--json"])
    assert refused.exit_code == 1 and "--pool-grading-versions" in refused.output
    assert "fingerprints of task t-1 differ" in refused.output
    pooled = CliRunner().invoke(app, ["metrics", str(tmp_path), "--json", "--pool-grading-versions"])
    assert pooled.exit_code == 0, pooled.output
    assert "warning: pooled despite different grading versions" in pooled.output


def test_failures_blamed_on_the_user_are_reported_apart() -> None:
    run = [
        make_result("t-1", 1),
        make_result("t-1", 0, trial=1, blame="user"),
        make_result("t-2", 0, blame="agent"),
        make_result("t-2", 1, trial=1),
    ]
    metrics = compute_metrics(run)
    assert metrics.pass_at_1 == pytest.approx(0.5)  # every failure counts here
    apart = metrics.without_user_failures
    assert apart is not None and apart.pass_at_1 == pytest.approx((1 + 0.5) / 2)  # t-1: 1/1, t-2: 1/2
    assert apart.pass_at_1_ci95 is not None
    assert compute_metrics(run[2:]).without_user_failures is None  # nothing blamed on the user
