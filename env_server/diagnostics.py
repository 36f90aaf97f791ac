"""Diagnostic commands over a run's stored episodes: `groundstate regrade RUN` and `groundstate blame RUN`.

Both read the run's `results.jsonl` and the episodes' event logs from the control-plane store
(GROUNDSTATE_STORE_URL); sandboxes come from GROUNDSTATE_SANDBOX_URL (either backend). Neither runs the
policy, and neither changes a stored score (docs/diagnostics.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from env_server.cli import TasksDirOption, _registry, _settings, console
from shared.tables import fit_table

if TYPE_CHECKING:
    from env_server.episodes.service import EpisodeService
    from shared.results import TrialResult

Report = TypeVar("Report")
RunDirArgument = Annotated[
    Path, typer.Argument(help="Run directory holding results.jsonl (or the .jsonl file).")
]


def _stored(run_dir: Path, out: Path | None) -> list[TrialResult]:
    """The run's stored results; exits with the reason when they cannot be read or `out` would overwrite."""
    from shared.results import read_results, results_path

    try:
        stored = read_results(run_dir)
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]{exc}[/red]", soft_wrap=True)
        raise typer.Exit(1) from exc
    if out is not None and results_path(out).exists():
        console.print(f"[red]{results_path(out)} exists; give a new run directory[/red]", soft_wrap=True)
        raise typer.Exit(1)
    return stored


def _on_service(tasks_dir: list[Path] | None, work: Callable[[EpisodeService], Report]) -> Report:
    """Run `work` on a service built from the settings, and release its sandboxes and store after."""
    from env_server.app import build_service

    service = build_service(_settings(tasks_dirs=tasks_dir or None), _registry(tasks_dir))
    try:
        return work(service)
    finally:
        service.sandboxes.close()
        service.store.engine.dispose()


def _write(out: Path, lines: list[TrialResult]) -> None:
    """Write results to a new run directory's results.jsonl."""
    from shared.results import results_path

    results_path(out).parent.mkdir(parents=True, exist_ok=True)
    results_path(out).write_text("".join(r.model_dump_json() + "\n" for r in lines), encoding="utf-8")


def regrade(
    run_dir: RunDirArgument,
    tasks_dir: TasksDirOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the re-graded results to OUT/results.jsonl (a new run directory)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full report (with scores) as JSON.")
    ] = False,
) -> None:
    """Re-score a run's stored episodes against today's tasks and scorer; say which trials moved and why.

    The episodes' event logs come from the control-plane store (GROUNDSTATE_STORE_URL) and replay on a
    fresh sandbox of either backend (GROUNDSTATE_SANDBOX_URL); no policy and no simulated user run. The
    stored scores and results are left as they were.
    """
    from env_server.episodes.regrade import regrade as regrade_run
    from env_server.episodes.regrade import updated_trial
    from shared.results import results_path

    stored = _stored(run_dir, out)
    report = _on_service(tasks_dir, lambda service: regrade_run(service, stored))
    if out is not None:
        _write(
            out,
            [
                updated_trial(r, t.score) if t.score is not None and t.score.status == "scored" else r
                for r, t in zip(stored, report.trials, strict=True)
            ],
        )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    rows = [
        [t.task_id, str(t.trial), t.outcome, f"{t.old_reward} -> {t.new_reward}", "; ".join(t.why)]
        for t in report.trials
        if t.outcome != "unchanged"
    ]
    if rows:
        header = ["task", "trial", "outcome", "reward", "why"]
        console.print(fit_table(console, header, rows, title=f"re-graded {run_dir}", wrap=["why"]))
    console.print(
        f"{len(report.trials)} trials: {report.unchanged} unchanged, {report.moved} moved, "
        f"{report.changed} changed (same reward), {report.skipped} skipped"
        + (f" -> {results_path(out)}" if out is not None else "")
    )


def blame(
    run_dir: RunDirArgument,
    tasks_dir: TasksDirOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the results with each failure's blame to OUT/results.jsonl (a new run directory); "
            "`groundstate metrics OUT` then shows pass@1 without the user-caused failures apart.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Blame each failed LLM-user episode of a run on the agent or the simulated user, with the evidence.

    The episodes come from the control-plane store (GROUNDSTATE_STORE_URL), like `regrade`; the agent's
    turns are replayed against the scripted user and the user's transcript is read for its mistakes.
    """
    from env_server.episodes.blame import blame_run

    stored = _stored(run_dir, out)
    report = _on_service(tasks_dir, lambda service: blame_run(service, stored))
    if out is not None:
        verdicts = {b.episode_id: b.verdict for b in report.episodes if b.verdict != "not-blamed"}
        _write(out, [r.model_copy(update={"blame": verdicts.get(r.episode_id or "")}) for r in stored])
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    rows = [[b.task_id, b.episode_id[:12], b.verdict, b.reason] for b in report.episodes]
    if rows:
        header = ["task", "episode", "verdict", "why"]
        console.print(fit_table(console, header, rows, title=f"blame {run_dir}", wrap=["why"]))
    console.print(
        f"{len(report.episodes)} failures: {report.agent} agent, {report.user} user, "
        f"{report.undecided} undecided, {report.not_blamed} not blamed"
    )
