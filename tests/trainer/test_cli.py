import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trainer.cli import app
from trainer.results import TrialResult, append_result
from trainer.selection import Pool

runner = CliRunner()


def write_run(run_dir: Path, outcomes: dict[str, list[int | None]], split: str = "train") -> Path:
    for task_id, rewards in outcomes.items():
        for trial, reward in enumerate(rewards):
            append_result(
                run_dir,
                TrialResult(
                    task_id=task_id,
                    domain=task_id.split("-")[0],
                    split=split,
                    trial=trial,
                    policy="p",
                    status="scored" if reward is not None else "backend_error",
                    reward=reward,
                    tokens_in=1_000_000,
                    tokens_out=500_000,
                ),
            )
    return run_dir


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(
        tmp_path / "run",
        {
            "hotel-a": [1, 1, 1, 1],
            "hotel-b": [1, 0, 0, 0, None],
            "retail-a": [0, 0, 0, 0],
            "retail-b": [1, 1, 0, 1],
        },
    )


def test_metrics_json_is_pure_json_with_the_metric_names(run: Path) -> None:
    result = runner.invoke(app, ["metrics", str(run), "--json", "--price-in", "2", "--price-out", "10"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["pass@1"] == pytest.approx((1 + 0.25 + 0 + 0.75) / 4)
    assert data["k"] == 4
    assert data["observed_k_of_k"] == 1
    assert data["solved_at_least_once"] == 3
    assert data["backend_errors"] == 1
    assert data["by_domain"]["retail"]["pass@1"] == pytest.approx(0.375)
    # 16 clean trials at 2 + 5 = 7 per trial, 4 + 1 + 0 + 3 = 8 successes, 1 reliable task
    assert data["cost"]["per_success"] == pytest.approx(16 * 7 / 8)
    assert data["cost"]["per_reliable_task"] == pytest.approx(16 * 7)


def test_metrics_table_shows_overall_and_domains(run: Path) -> None:
    result = runner.invoke(app, ["metrics", str(run), "--k", "2"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "pass@2" in result.stdout and "pass^2" in result.stdout
    assert "50.00%" in result.stdout  # pass@1
    for group in ("overall", "hotel", "retail"):
        assert group in result.stdout


def test_metrics_needs_both_prices(run: Path) -> None:
    result = runner.invoke(app, ["metrics", str(run), "--price-in", "2"])
    assert result.exit_code == 2
    assert "give both --price-in and --price-out" in result.output


def test_a_run_without_results_is_an_error(tmp_path: Path) -> None:
    for command in (["metrics"], ["select", "--out", str(tmp_path / "p.json")], ["report"]):
        result = runner.invoke(app, [*command, str(tmp_path / "missing")])
        assert result.exit_code == 1
        assert "no results file" in result.stderr


def test_select_writes_the_pool_and_prints_the_histogram(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "pool.json"
    result = runner.invoke(app, ["select", str(run), "--keep", "hard,medium", "--out", str(out)])
    assert result.exit_code == 0, result.output
    pool = Pool.read(out)
    assert [t.task_id for t in pool.tasks] == ["hotel-b"]  # 1/4: hard
    assert pool.histogram == {
        "too_hard": 1,
        "hard": 1,
        "medium": 0,
        "easy": 1,
        "too_easy": 1,
        "insufficient": 0,
    }
    for band in ("too_hard", "hard", "medium", "easy", "too_easy", "insufficient"):
        assert band in result.stdout
    assert f"1 tasks written to {out}" in result.stdout.replace("\n", "")


def test_select_leaves_test_tasks_out_and_refuses_unknown_bands(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"hotel-a": [1, 0, 0, 0]})
    write_run(run, {"hotel-bench": [1, 0, 0, 0]}, split="test")
    result = runner.invoke(
        app, ["select", str(run), "--out", str(tmp_path / "pool.json"), "--min-trials", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "1 test-split tasks left out" in result.stdout
    assert [t.task_id for t in Pool.read(tmp_path / "pool.json").tasks] == ["hotel-a"]
    result = runner.invoke(app, ["select", str(run), "--keep", "hardish", "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 1
    assert "unknown band 'hardish'" in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_report_writes_html_and_prints_its_path(run: Path, tmp_path: Path) -> None:
    baseline = write_run(tmp_path / "base", {"hotel-a": [0, 0, 0, 0], "retail-b": [1, 1, 1, 1]})
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(run), "--baseline", str(baseline), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    html = out.read_text()
    assert "50.00%" in html
    assert "Compared with the baseline" in html
    assert "solved at least once: 1 tasks gained, 0 tasks lost" in html


MODULES = [
    "trainer.results",
    "trainer.metrics",
    "trainer.selection",
    "trainer.report",
    "trainer.cli",
    "trainer.best_of",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_exactly_the_public_names_defined_in_the_module(name: str) -> None:
    module = importlib.import_module(name)
    defined = {
        n
        for n, value in vars(module).items()
        if not n.startswith("_") and getattr(value, "__module__", None) == name and callable(value)
    }
    assert defined <= set(module.__all__)
    assert all(hasattr(module, n) for n in module.__all__)


def test_measuring_modules_import_without_torch_or_the_server() -> None:
    code = (
        "import sys, " + ", ".join(MODULES) + "\n"
        "banned = ('torch', 'env_server', 'verl', 'vllm')\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        "assert not leaked, leaked"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_metrics_table_is_readable_in_a_narrow_terminal(run: Path, columns: int) -> None:
    result = runner.invoke(
        app,
        ["metrics", str(run), "--k", "2", "--price-in", "2", "--price-out", "10"],
        env={"COLUMNS": str(columns)},
    )
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout  # no cell cut short
    assert max(len(line) for line in result.stdout.splitlines()) <= columns
    for value in ("50.00%", "37.50%", "overall", "hotel", "retail", "$/reliable task", "tokens out"):
        assert value in result.stdout


def test_with_one_trial_pass_at_1_is_listed_once_at_80_columns(tmp_path: Path) -> None:
    one = write_run(tmp_path / "one", {"hotel-a": [1], "hotel-b": [0], "retail-a": [1]})
    out = subprocess.run(
        [sys.executable, "-m", "groundstate", "metrics", str(one), "--price-in", "2", "--price-out", "10"],
        env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "(k = 1)" in out and out.count("pass@1") == 1 and "pass^1" not in out
    assert "$/success" in out and "$/reliable task" in out  # costs carry their unit
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80


def test_metrics_table_is_one_row_per_group_when_wide(run: Path) -> None:
    result = runner.invoke(app, ["metrics", str(run), "--k", "2"], env={"COLUMNS": "250"})
    header = next(line for line in result.stdout.splitlines() if "group" in line)
    assert "pass@1" in header and "tokens out" in header
