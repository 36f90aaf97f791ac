"""The `groundstate` console script: task listing and validation, through the real entry point."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from env_server.store.migrate import head
from groundstate.cli import app

ROOT = Path(__file__).parents[2]


def test_tasks_validate_passes_on_sqlite(toy_site: Path) -> None:
    result = CliRunner().invoke(app, ["tasks", "validate", "--domain", "toybank"])
    assert result.exit_code == 0, result.output
    assert "6 passed, 0 failed (sqlite)" in result.output


@pytest.mark.postgres
def test_tasks_validate_passes_on_postgresql(toy_site: Path, pg_url: str) -> None:
    result = CliRunner().invoke(
        app, ["tasks", "validate", "--domain", "toybank", "--backend", "postgresql", "--pg-url", pg_url]
    )
    assert result.exit_code == 0, result.output
    assert "6 passed, 0 failed (postgresql)" in result.output


def test_tasks_validate_fails_a_task_whose_write_is_unneeded(toy_site: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "toybank-bad-009.yaml").write_text(
        "id: toybank-bad-009\ndomain: toybank\nsplit: train\n"
        "user: {persona: p, goal: g, script: [hi]}\n"
        "initial_patch: {accounts: [{id: AC-0009, owner: x, balance_cents: 0, status: frozen}]}\n"
        "gold_actions:\n  - {name: freeze_account, arguments: {account_id: AC-0009}}\n"
    )
    result = CliRunner().invoke(app, ["tasks", "validate", "--domain", "toybank", "--tasks-dir", str(bad)])
    assert result.exit_code == 1
    assert "toybank-bad-009" in result.output and "1 failed" in result.output


def test_tasks_list_counts_by_split(toy_site: Path) -> None:
    result = CliRunner().invoke(app, ["tasks", "list"])
    assert result.exit_code == 0
    assert "toybank" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["tasks", "list", "--domain", "nope"],
        ["tasks", "validate", "--domain", "nope"],
        ["tasks", "generate", "--domain", "nope", "--n", "1", "--out", "unused"],
    ],
)
def test_an_unknown_domain_is_a_clear_error_naming_installed_ones(toy_site: Path, command: list[str]) -> None:
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert (
        "unknown domain 'nope' (known: hotel, insurance, retail, starter, telecom, toybank, travel)" in said
    )
    assert "Traceback" not in result.output


def test_db_upgrade_through_the_console_script(tmp_path: Path) -> None:
    env = {**os.environ, "GROUNDSTATE_STORE_URL": f"sqlite:///{tmp_path}/s.db"}
    out = subprocess.run(
        [sys.executable, "-m", "groundstate", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert f"at revision {head()}" in out.stdout


def test_serve_refuses_a_public_address_without_api_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GROUNDSTATE_API_KEY"}
    out = subprocess.run(
        [sys.executable, "-m", "groundstate", "serve", "--host", "0.0.0.0"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 2 and "GROUNDSTATE_API_KEY is required" in out.stdout


def test_tasks_list_fits_80_columns() -> None:
    result = CliRunner().invoke(app, ["tasks", "list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "hotel" in result.output and "analytics" in result.output


def test_one_domains_task_list_fits_80_columns() -> None:
    result = CliRunner().invoke(app, ["tasks", "list", "--domain", "hotel"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output and "hotel-corp-modify-approval-001" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_the_top_level_help_lists_commands_in_workflow_order() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "100"})
    listed = re.findall(r"^│ (\w+) ", result.output, re.M)
    order = ["serve", "tasks", "eval", "metrics", "report", "probe", "select", "train", "blame", "regrade"]
    assert listed[: len(order)] == order, listed
