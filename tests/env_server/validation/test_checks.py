"""`groundstate tasks validate`: each check catches the flaw it is for (toy tasks in tests/toy_domain/flawed).

Every flawed task fails exactly the check named after its flaw; its fixed twin passes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundstate.cli import app

FLAWED = Path(__file__).parents[2] / "toy_domain" / "flawed"
#: A task a do-nothing agent wins is won by every hack that makes no change too (act-before-consent makes
#: the gold's calls, and the toy bank asks for no yes).
SILENT_HACKS = {
    f"hack:{h}"
    for h in (
        "recital",
        "recital-chunks",
        "value-dump",
        "value-dribble",
        "vocabulary-spray",
        "term-per-message",
        "echo",
        "dump-after-writes",
        "negated-facts",
    )
}


@pytest.fixture
def report(toy_site: Path) -> dict[str, dict[str, tuple[bool, str]]]:
    result = CliRunner().invoke(
        app, ["tasks", "validate", "--domain", "toybank", "--tasks-dir", str(FLAWED), "--json"]
    )
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    return {
        r["task_id"]: {c["name"]: (c["passed"], c["detail"]) for c in r["checks"]} | {"_notes": r["notes"]}
        for r in body["results"]
    }


def failed(report: dict[str, Any], task_id: str) -> set[str]:
    return {name for name, value in report[task_id].items() if name != "_notes" and not value[0]}


def test_the_builtin_toy_tasks_pass_every_check(report: dict[str, Any]) -> None:
    for task_id in [t for t in report if not t.split("-")[-1].startswith("9")]:
        assert failed(report, task_id) == set(), (task_id, report[task_id])


def test_a_do_nothing_agent_must_fail_every_task(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-silent-901") == {"empty", *SILENT_HACKS}
    assert "do-nothing agent scores 1" in report["toybank-silent-901"]["empty"][1]
    # a narrow rubric question makes the silent agent fail, and needs no judge to do so
    assert failed(report, "toybank-rubric-910") == set()
    assert report["toybank-rubric-910"]["empty"] == (True, "scores 0")


def test_an_unsettled_sensitive_argument_fails_and_a_settled_one_is_reported(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-ticket-902") == {"arguments"}
    detail = report["toybank-ticket-902"]["arguments"][1]
    assert "tickets.priority" in detail and "tickets.topic" in detail
    assert "without priority" in detail and "with topic=fees" in detail
    assert failed(report, "toybank-ticket-903") == set()
    notes = report["toybank-ticket-903"]["_notes"]
    assert any("tickets.priority determined by 'user: says it is urgent'" in n for n in notes)
    # the built-in task ignores the priority nothing fixes, so the priority variant is no finding
    assert not any("priority" in n for n in report["toybank-ticket-006"]["_notes"])
    assert any("tickets.topic determined by" in n for n in report["toybank-ticket-006"]["_notes"])


def test_phrase_items_are_flagged(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-phrase-904") == {"communicate-items"}
    assert "'transfer complete'" in report["toybank-phrase-904"]["communicate-items"][1]


def test_analytics_boundaries_must_be_settled_by_the_question(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-rich-905") == {"boundaries"}
    assert (
        "balance_cents >= 400000  ->  balance_cents > 400000" in report["toybank-rich-905"]["boundaries"][1]
    )
    assert failed(report, "toybank-rich-906") == set()
    assert report["toybank-rich-906"]["_notes"]
    assert failed(report, "toybank-top-907") == {"boundaries"}
    assert "LIMIT 1 cuts a tie" in report["toybank-top-907"]["boundaries"][1]


def test_text_slips_are_linted(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-typo-908") == {"text"}
    detail = report["toybank-typo-908"]["text"][1]
    assert '"member member"' in detail
    assert '"Tuesday 14 October 2026" is a Wednesday' in detail
    assert "AC-7777" in detail and "AC-0081" not in detail and "AC-0082" not in detail


def test_determined_and_ignored_columns_must_exist(report: dict[str, Any]) -> None:
    assert failed(report, "toybank-columns-909") == {"columns"}
    assert "tickets.urgency" in report["toybank-columns-909"]["columns"][1]


def test_summary_counts_every_check_and_findings_files_list_each_failure(
    toy_site: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        app,
        [
            "tasks",
            "validate",
            "--domain",
            "toybank",
            "--tasks-dir",
            str(FLAWED),
            "--report-dir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 1
    assert "task validity (sqlite): 16 tasks" in result.output
    for check in ("gold", "empty", "arguments", "communicate-items", "script-replay", "boundaries", "text"):
        assert check in result.output
    assert "9 passed, 7 failed (sqlite)" in result.output
    lines = (tmp_path / "validity-toybank.txt").read_text().splitlines()
    rows = [line.split("\t") for line in lines]
    assert all(len(r) == 3 for r in rows)
    assert {(r[0], r[1]) for r in rows} == {("toybank-silent-901", h) for h in SILENT_HACKS} | {
        ("toybank-silent-901", "empty"),
        ("toybank-ticket-902", "arguments"),
        ("toybank-phrase-904", "communicate-items"),
        ("toybank-rich-905", "boundaries"),
        ("toybank-top-907", "boundaries"),
        ("toybank-typo-908", "text"),
        ("toybank-columns-909", "columns"),
    }
    assert (tmp_path / "notes-toybank.txt").read_text().count("\t") >= 2


@pytest.mark.postgres
def test_postgresql_finds_the_same_flaws(toy_site: Path, pg_url: str, report: dict[str, Any]) -> None:
    args = ["tasks", "validate", "--domain", "toybank", "--tasks-dir", str(FLAWED), "--json"]
    result = CliRunner().invoke(app, [*args, "--backend", "postgresql", "--pg-url", pg_url])
    body = json.loads(result.stdout)
    on_pg = {(r["task_id"], c["name"]) for r in body["results"] for c in r["checks"] if not c["passed"]}
    on_sqlite = {(t, name) for t in report for name in failed(report, t)}
    assert on_pg == on_sqlite and len(on_pg) == 7 + len(SILENT_HACKS)
