"""`groundstate eval` and `groundstate probe` through the real console app, against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from groundstate.cli import app
from tests.live_server import serve
from tests.toy_domain import domain as toy_domain
from trainer.results import read_results
from trainer.selection import Pool

runner = CliRunner()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


def test_eval_runs_a_campaign_resumes_it_and_feeds_report(server: str, tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["eval", "--policy", "replay", "--server", server, "--domains", "toybank", "--split", "test"]
    args += ["--trials", "2", "--concurrency", "2", "--retries", "0", "--out", str(run), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "8 trials run in" in result.output and "(8 episodes, 0 retries), 0 already done" in result.output
    assert "6 solved, 2 backend errors" in result.output
    assert "rerun the same command to retry them" in result.output
    lines = read_results(run)
    assert len(lines) == 8 and {r.split for r in lines} == {"test"}
    assert {r.task_id for r in lines if r.status == "backend_error"} == {"toybank-judge-003"}
    config = json.loads((run / "run.json").read_text())["config"]
    assert (config["policy"], config["trials"], config["split"], config["domains"]) == (
        "replay",
        2,
        "test",
        ["toybank"],
    )

    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "(2 episodes, 0 retries), 6 already done" in again.output

    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    html = (run / "report.html").read_text()
    assert "pass@1" in html and "backend errors" in html


def test_probe_defaults_to_eight_train_trials_and_feeds_select(server: str, tmp_path: Path) -> None:
    run = tmp_path / "probe"
    result = runner.invoke(
        app, ["probe", "--policy", "replay", "--server", server, "--out", str(run), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert f"next: groundstate select {run}" in result.output
    lines = read_results(run)
    assert len(lines) == 2 * 8 and {r.split for r in lines} == {"train"}
    assert {r.trial for r in lines} == set(range(8))
    pool_file = tmp_path / "pool.json"
    selected = runner.invoke(app, ["select", str(run), "--out", str(pool_file), "--keep", "too_easy"])
    assert selected.exit_code == 0, selected.output
    pool = Pool.read(pool_file)
    assert sorted(t.task_id for t in pool.tasks) == ["toybank-analytics-005", "toybank-refuse-frozen-002"]


def test_eval_best_of_n_is_reported_apart(server: str, tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = [
        "eval",
        "--policy",
        "replay",
        "--server",
        server,
        "--tasks",
        "toybank-transfer-001",
        "--trials",
        "1",
    ]
    args += ["--samples", "3", "--select", "majority", "--out", str(run), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "best-of-3" in result.output
    assert [(r.sample, r.reward) for r in read_results(run)] == [(3, 1)]
    assert len((run / "samples.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--policy", "gemini:pro"], "unknown policy 'gemini'; known: local, openai, recorded, replay"),
        (["--policy", "openai:m?temprature=1"], "invalid openai policy options"),
        (["--policy", "replay", "--domains", "hotel"], "unknown domains hotel"),
        (["--policy", "replay", "--samples", "3"], "best-of-N needs both"),
        (["--policy", "replay", "--split", "dev"], "split must be train, test or all"),
        (["--policy", "replay", "--user", "robot"], "user"),
    ],
)
def test_eval_reports_bad_options_clearly(
    server: str, tmp_path: Path, extra: list[str], message: str
) -> None:
    result = runner.invoke(
        app, ["eval", "--server", server, "--out", str(tmp_path / "run"), "--quiet", *extra]
    )
    assert result.exit_code != 0
    assert message in result.output
    assert not (tmp_path / "run" / "run.json").exists(), "a campaign that never started records nothing"


@pytest.mark.slow
def test_eval_with_local_smollm2_end_to_end(server: str, tmp_path: Path) -> None:
    """A small campaign of the real local model with the scripted user, then the report of its run.

    In-process (the real console app), so the model loaded once per process serves the whole test session.
    """
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    run = tmp_path / "run"
    tasks = "toybank-transfer-001,toybank-analytics-004"  # an action and an analytics task
    args = ["eval", "--policy", "local:smollm2?max_new_tokens=32", "--server", server, "--tasks", tasks]
    args += [
        "--split",
        "all",
        "--trials",
        "2",
        "--concurrency",
        "2",
        "--max-turns",
        "3",
        "--user",
        "scripted",
    ]
    args += ["--retries", "0", "--out", str(run), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "(4 episodes, 0 retries)" in result.output and "0 backend errors" in result.output
    lines = read_results(run)
    assert len(lines) == 4 and {r.policy for r in lines} == {"local:smollm2"}
    assert all(r.status == "scored" and r.reward is not None for r in lines), [r.error for r in lines]
    assert all(r.tokens_in > 0 and 0 < r.tokens_out <= 3 * 32 and 1 <= r.turns <= 3 for r in lines)
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert Path(report.output.strip()) == run / "report.html"
    assert "local:smollm2" in (run / "report.html").read_text()


def test_eval_leaves_a_curriculum_out_of_its_default_domains(tmp_path: Path) -> None:
    from env_server.domains.starter import domain as starter

    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain, starter]))) as server:
        args = ["eval", "--policy", "replay", "--server", server, "--limit", "1", "--trials", "1", "--quiet"]
        default = runner.invoke(app, [*args, "--out", str(tmp_path / "default")])
        named = runner.invoke(app, [*args, "--domains", "starter", "--out", str(tmp_path / "named")])
    assert default.exit_code == 0 and named.exit_code == 0, default.output + named.output
    assert {r.domain for r in read_results(tmp_path / "default")} == {"toybank"}
    assert {r.domain for r in read_results(tmp_path / "named")} == {"starter"}


def test_eval_into_a_log_file_prints_plain_progress_lines(server: str, tmp_path: Path) -> None:
    args = ["eval", "--policy", "replay", "--server", server, "--domains", "toybank", "--trials", "1"]
    result = runner.invoke(app, [*args, "--retries", "0", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    # not a terminal: no bar, a plain line at the end (and every 30 s while it runs)
    assert "replay: 4/4 trials · 0 running · 1 errors · pass@1 100.0% · " in result.output
