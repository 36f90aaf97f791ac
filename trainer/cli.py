"""Command-line commands of the measuring side: `metrics`, `select` and `report` over a run directory.

`app` is a Typer app; the `groundstate` console script mounts it. Every command reads `RUN_DIR/results.jsonl`
(see `trainer.results`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from trainer.metrics import GroupMetrics, Metrics, Pricing, compute_metrics
from trainer.report import write_report
from trainer.results import TrialResult, read_results
from trainer.selection import BANDS, DEFAULT_MIN_TRIALS, SelectionError, select_pool

__all__ = ["app", "metrics_command", "report_command", "select_command"]

app = typer.Typer(
    help="Measure evaluation runs: metrics, difficulty selection, HTML reports.",
    no_args_is_help=True,
    add_completion=False,
)

RunDir = Annotated[Path, typer.Argument(help="Run directory holding results.jsonl (or the .jsonl file).")]
PriceIn = Annotated[float | None, typer.Option("--price-in", min=0, help="Price per 1M input tokens.")]
PriceOut = Annotated[float | None, typer.Option("--price-out", min=0, help="Price per 1M output tokens.")]


def _load(run_dir: Path) -> list[TrialResult]:
    try:
        return read_results(run_dir)
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


def _pricing(price_in: float | None, price_out: float | None) -> Pricing | None:
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise typer.BadParameter("give both --price-in and --price-out, or neither")
    return Pricing(price_in_per_1m=price_in, price_out_per_1m=price_out)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.2f}%"


def _metrics_table(metrics: Metrics, title: str) -> Table:
    k = metrics.k
    table = Table(title=title)
    columns = ["group", "tasks", "trials", "backend err", "pass@1", "95% CI", f"pass@{k}", f"pass^{k}"]
    columns += [f"{k}/{k} tasks", "solved ≥1", "turns", "tool calls", "tokens in", "tokens out"]
    if metrics.cost is not None:
        columns += ["cost/success", "cost/reliable task"]
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")

    def row(name: str, m: GroupMetrics) -> list[str]:
        ci = m.pass_at_1_ci95
        cells = [
            name,
            str(m.tasks),
            str(m.trials),
            str(m.backend_errors),
            _pct(m.pass_at_1),
            f"{ci.low * 100:.1f}–{ci.high * 100:.1f}%" if ci else "—",
            _pct(m.pass_at_k),
            _pct(m.pass_hat_k),
            f"{m.observed_k_of_k} ({_pct(m.observed_k_of_k_rate)})",
            f"{m.solved_at_least_once} ({_pct(m.solved_at_least_once_rate)})",
        ]
        cells += ["—" if v is None else f"{v:,.1f}" for v in (m.mean_turns, m.mean_tool_calls)]
        cells += ["—" if v is None else f"{v:,.0f}" for v in (m.mean_tokens_in, m.mean_tokens_out)]
        if m.cost is not None:
            cells += [
                "—" if v is None else f"{v:,.4f}" for v in (m.cost.per_success, m.cost.per_reliable_task)
            ]
        return cells

    table.add_row(*row("overall", metrics), end_section=True)
    for domain, m in metrics.by_domain.items():
        table.add_row(*row(domain, m))
    return table


@app.command("metrics")
def metrics_command(
    run_dir: RunDir,
    k: Annotated[
        int | None, typer.Option("--k", min=1, help="k of pass@k, pass^k, k/k (default: fewest trials).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON only.")] = False,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
) -> None:
    """Print pass@1 (95% CI), pass@k, pass^k, k/k and cost of a run, overall and per domain."""
    pricing = _pricing(price_in, price_out)
    metrics = compute_metrics(_load(run_dir), k=k, pricing=pricing)
    if as_json:
        typer.echo(json.dumps(metrics.as_json(), indent=2))
        return
    console = Console()
    console.print(_metrics_table(metrics, f"{run_dir} (k = {metrics.k})"))
    if metrics.best_of_n is not None:
        best = metrics.best_of_n
        console.print(_metrics_table(best, f"best-of-{best.samples_per_trial} (k = {best.k})"))


@app.command("select")
def select_command(
    run_dir: RunDir,
    out: Annotated[Path, typer.Option("--out", help="Where to write the pool (JSON).")],
    keep: Annotated[
        str, typer.Option("--keep", help=f"Comma-separated bands to keep: {', '.join(BANDS)}.")
    ] = ("hard,medium"),
    min_trials: Annotated[
        int, typer.Option("--min-trials", min=1, help="Fewer clean trials leave a task insufficient.")
    ] = DEFAULT_MIN_TRIALS,
) -> None:
    """Band the probed train tasks by Jeffreys posterior and write a training pool of the kept bands."""
    results = _load(run_dir)
    try:
        pool = select_pool(results, keep=keep.split(","), min_trials=min_trials, out=out)
    except SelectionError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    table = Table(title="difficulty bands (train tasks)")
    table.add_column("band")
    table.add_column("tasks", justify="right")
    table.add_column("kept", justify="center")
    for band, count in pool.histogram.items():
        table.add_row(band, str(count), "yes" if band in pool.keep else "")
    console = Console()
    console.print(table)
    if pool.excluded_test:
        console.print(
            f"{len(pool.excluded_test)} test-split tasks left out: test tasks never enter a training pool."
        )
    console.print(f"{len(pool.tasks)} tasks written to {out}")


@app.command("report")
def report_command(
    run_dir: RunDir,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Another run to compare against.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output file (default RUN_DIR/report.html).")
    ] = None,
    k_max: Annotated[int | None, typer.Option("--k-max", min=1, help="Largest k of the curves.")] = None,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
) -> None:
    """Write a self-contained HTML report of a run (optionally against a baseline run)."""
    pricing = _pricing(price_in, price_out)
    try:
        target = write_report(run_dir, baseline, k_max=k_max, out=out, pricing=pricing)
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(str(target))
