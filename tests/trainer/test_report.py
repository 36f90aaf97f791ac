import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from tests.browser import CHROMIUM_FLAGS, chromium
from trainer.metrics import Pricing, compute_metrics
from trainer.report import write_report
from trainer.results import CheckOutcome, DiffEntry, TrialResult, append_result, read_results


def write_run(run_dir: Path, outcomes: dict[str, list[int | None]], policy: str = "policy-a") -> Path:
    """Append one record per trial (None: a backend error) with failure details on the failed ones."""
    for task_id, rewards in outcomes.items():
        domain, split = ("retail", "test") if task_id.startswith("retail") else ("hotel", "train")
        for trial, reward in enumerate(rewards):
            failed = reward == 0
            append_result(
                run_dir,
                TrialResult(
                    task_id=task_id,
                    domain=domain,
                    split=split,
                    trial=trial,
                    policy=policy,
                    status="backend_error" if reward is None else "scored",
                    reward=reward,
                    tokens_in=12_000,
                    tokens_out=800,
                    turns=6,
                    tool_calls=4,
                    latency_s=3.2,
                    error="sandbox: database is locked" if reward is None else None,
                    diff=[
                        DiffEntry(kind="missing", table="approval_requests", key="AR-1"),
                        DiffEntry(kind="wrong", table="bookings", key="BK-20417", column="check_in"),
                    ]
                    if failed and trial % 2
                    else [],
                    failed_checks=[
                        CheckOutcome(name="communicate:manager approval", passed=False, detail="absent")
                    ]
                    if failed
                    else [],
                ),
            )
    return run_dir


BASELINE = {
    "hotel-a": [1, 1, 1, 1, 1],
    "hotel-b": [0, 0, 0, 0, 0],
    "hotel-c": [1, 0, 0, 0, 0],
    "retail-a": [1, 1, 0, 1, 1],
    "retail-b": [1, 0, 0, 0, 0],
}
CANDIDATE = {
    "hotel-a": [1, 1, 1, 1, 1],
    "hotel-b": [0, 1, 1, None, 1],
    "hotel-c": [1, 1, 1, 1, 1],
    "retail-a": [1, 1, 1, 1, 1],
    "retail-b": [0, 0, 0, 0, 0],
    "retail-c": [None, None, None, None, None],
}


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return write_run(tmp_path / "candidate", CANDIDATE), write_run(
        tmp_path / "baseline", BASELINE, "policy-b"
    )


def test_report_holds_the_headline_numbers_and_the_comparison(runs: tuple[Path, Path]) -> None:
    run, baseline = runs
    path = write_report(run, baseline, pricing=Pricing(price_in_per_1m=1.0, price_out_per_1m=4.0))
    assert path == run / "report.html"
    html = path.read_text()
    m = compute_metrics(read_results(run))
    # pass@1 = (1 + 3/4 + 1 + 1 + 0) / 5 = 0.75 (retail-c has only backend errors)
    assert m.pass_at_1 == pytest.approx(0.75)
    assert "75.00%" in html
    assert m.k == 4 and "pass@4" in html and "pass^4" in html
    # solved at least once: hotel-b gained, retail-b lost; every trial succeeded: hotel-c and retail-a gained
    assert "<h3>solved at least once: 1 tasks gained, 1 tasks lost</h3>" in html
    assert "<h3>every trial succeeded (k/k, k = 4): 2 tasks gained, 0 tasks lost</h3>" in html
    # one k for both runs (the candidate has a task with 4 clean trials): pass^4 is 60.00% vs 24.00%
    assert "<td>pass^4</td><td>60.00%</td><td>24.00%</td><td class='pos'>+36.00 pp</td>" in html
    assert "<td>backend errors</td><td>6</td><td>0</td><td class='neg'>+6</td>" in html
    assert "+31.00 pp" in html  # pass@1 (1 + 0 + 0.2 + 0.8 + 0.2) / 5 = 0.44 -> 0.75
    assert "sandbox: database is locked" in html
    assert "approval_requests" in html and "communicate" in html
    assert html.count("<svg") == 2
    # self-contained: no script, no external resource
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_report_without_baseline_goes_where_told(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = runs
    path = write_report(run / "results.jsonl", out=tmp_path / "out" / "r.html", k_max=2)
    html = path.read_text()
    assert path == tmp_path / "out" / "r.html"
    assert "Compared with the baseline" not in html
    assert "Difficulty bands" in html


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=True)


@pytest.mark.slow
def test_report_renders_in_headless_chromium(runs: tuple[Path, Path], tmp_path: Path) -> None:
    binary = chromium()
    run, baseline = runs
    report = write_report(run, baseline)
    png = tmp_path / "report.png"
    run_chromium(
        binary, tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,2000", report.as_uri()
    )
    assert png.is_file()
    pixels = imread(png)[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    assert pixels.std() > 0.05  # not a blank page
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # text, tables and plots, not a flat fill
    dom = run_chromium(binary, tmp_path / "profile", "--dump-dom", report.as_uri()).stdout
    assert "75.00%" in dom
    assert "44.00%" in dom  # the baseline's pass@1
    assert "1 tasks gained" in dom


def test_a_one_trial_run_lists_pass_at_1_once_and_labels_its_single_points(tmp_path: Path) -> None:
    run = write_run(tmp_path / "one", {"hotel-a": [1], "hotel-b": [0], "retail-a": [1]})
    page = write_report(run, pricing=Pricing(price_in_per_1m=2, price_out_per_1m=10)).read_text()
    headline = page[page.index("<h2>Headline</h2>") : page.index("<h2>Per domain</h2>")]
    domains = page[page.index("<h2>Per domain</h2>") : page.index("<h2>pass@k and pass^k</h2>")]
    assert headline.count("<td>pass@1</td>") == 1 and "pass^1" not in headline
    assert domains.count("pass@1") == 1 and "pass^1" not in domains  # the header's "pass@1 [95%]" only
    assert "cost per successful attempt ($)" in headline and "cost per reliable task ($)" in headline
    assert "66.7%" in page  # the single points of the curve are labelled with their value


def test_runs_without_tasks_in_common_show_no_delta(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"hotel-a": [1, 1], "hotel-b": [0, 1]})
    other = write_run(tmp_path / "other", {"retail-a": [1, 0], "retail-b": [0, 0]}, "policy-b")
    page = write_report(run, other).read_text()
    assert "Δ" not in page.replace("no Δ is shown", "")
    assert "0 tasks in both runs" in page and "No task in common: no Δ is shown" in page


def test_runs_of_different_task_sets_lead_with_the_overlap(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"hotel-a": [1, 1], "hotel-b": [1, 1], "hotel-c": [1, 1]})
    other = write_run(tmp_path / "other", {"hotel-a": [0, 0], "retail-a": [1, 1]}, "policy-b")
    page = write_report(run, other).read_text()
    warning, first = page.index("id='overlap'"), page.index("<h2>")
    assert warning < first  # the warning comes before any figure
    assert "1 tasks in both, 2 only in this run, 1 only in the baseline" in page
    overlap = page.split("<h2>Headline on the 1 tasks in both runs</h2>")[1].split("<h2>")[0]
    # on hotel-a alone: 100% against 0%, where the whole runs read 100% against 50%
    assert "<td>pass@1</td><td>100.00%" in overlap
    assert "<td>0.00%</td><td class='pos'>+100.00 pp</td>" in overlap
