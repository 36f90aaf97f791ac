"""The trainer's commands: campaigns (`eval`, `probe`) and measures (`metrics`, `select`, `report`).

`app` is a Typer app; the `groundstate` console script mounts it. Campaigns write `RUN_DIR/results.jsonl` (see
`trainer.evaluate`); every measuring command reads it (see `trainer.results`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console, RenderableType

from shared.client import DEFAULT_SERVER_URL
from shared.errors import ClientError
from shared.tables import fit_table
from trainer.cli_options import ApiKeyOpt, QuietOpt, ServerOpt, invalid_options
from trainer.evaluate import CampaignConfig, CampaignError, CampaignSummary, evaluate
from trainer.metrics import GroupMetrics, Metrics, MixedGradingError, Pricing, compute_metrics
from trainer.policies import PolicySpecError, UnknownNameError
from trainer.report import write_report
from trainer.results import TrialResult, grading_conflicts, read_results
from trainer.selection import BANDS, DEFAULT_MIN_TRIALS, SelectionError, select_pool

__all__ = ["app", "eval_command", "metrics_command", "probe_command", "report_command", "select_command"]

app = typer.Typer(
    help="Run evaluation campaigns and measure them: metrics, difficulty selection, HTML reports.",
    no_args_is_help=True,
    add_completion=False,
)

RunDir = Annotated[Path, typer.Argument(help="Run directory holding results.jsonl (or the .jsonl file).")]
PriceIn = Annotated[
    float | None, typer.Option("--price-in", min=0, help="Dollars per 1M input tokens (costs are in $).")
]
PriceOut = Annotated[float | None, typer.Option("--price-out", min=0, help="Dollars per 1M output tokens.")]
PoolGrading = Annotated[
    bool,
    typer.Option(
        "--pool-grading-versions",
        help="Pool results graded against different versions (task, domain, scorer or judge changed "
        "between trials); refused by default because their rewards do not compare.",
    ),
]


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


def _metrics_table(console: Console, metrics: Metrics, title: str) -> RenderableType:
    """The metrics of a run, overall then per domain, in the widest layout that fits the console."""
    k = metrics.k
    # at k = 1, pass@k and pass^k are pass@1 again: listed once
    policy_errors = metrics.policy_errors > 0  # a column only when there are any: named, never a silent 0
    columns = ["group", "tasks", "trials", "backend err", *(["policy err"] if policy_errors else [])]
    columns += ["pass@1", "95% CI", *([f"pass@{k}", f"pass^{k}"] if k > 1 else [])]
    columns += [f"{k}/{k} tasks", "solved ≥1", "turns", "tool calls", "tokens in", "tokens out"]
    if metrics.cost is not None:
        columns += ["$/success", "$/reliable task"]

    def row(name: str, m: GroupMetrics) -> list[str]:
        ci = m.pass_at_1_ci95
        cells = [
            name,
            str(m.tasks),
            str(m.trials),
            str(m.backend_errors),
            *([str(m.policy_errors)] if policy_errors else []),
            _pct(m.pass_at_1),
            f"{ci.low * 100:.1f}–{ci.high * 100:.1f}%" if ci else "—",
            *([_pct(m.pass_at_k), _pct(m.pass_hat_k)] if k > 1 else []),
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

    rows = [row("overall", metrics)] + [row(domain, m) for domain, m in metrics.by_domain.items()]
    return fit_table(console, columns, rows, title=title, sections=[0])


def _print_metrics(metrics: Metrics, name: str) -> None:
    console = Console()
    console.print(_metrics_table(console, metrics, f"{name} (k = {metrics.k})"))
    if metrics.without_user_failures is not None:
        apart = metrics.without_user_failures
        title = f"without the failures blamed on the simulated user (k = {apart.k})"
        console.print(_metrics_table(console, apart, title))
    if metrics.best_of_n is not None:
        best = metrics.best_of_n
        console.print(_metrics_table(console, best, f"best-of-{best.samples_per_trial} (k = {best.k})"))


@app.command("metrics")
def metrics_command(
    run_dir: RunDir,
    k: Annotated[
        int | None, typer.Option("--k", min=1, help="k of pass@k, pass^k, k/k (default: fewest trials).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON only.")] = False,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    pool_grading_versions: PoolGrading = False,
) -> None:
    """Print pass@1 (95% CI), pass@k, pass^k, k/k and cost of a run, overall and per domain."""
    pricing = _pricing(price_in, price_out)
    results = _load(run_dir)
    try:
        metrics = compute_metrics(results, k=k, pricing=pricing, pool_grading_versions=pool_grading_versions)
    except MixedGradingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    for conflict in grading_conflicts(results):  # only reached when pooling was asked for
        typer.echo(f"warning: pooled despite different grading versions: {conflict}", err=True)
    if as_json:
        typer.echo(json.dumps(metrics.as_json(), indent=2))
        return
    _print_metrics(metrics, str(run_dir))


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
    console = Console()
    rows = [[band, str(count), "yes" if band in pool.keep else ""] for band, count in pool.histogram.items()]
    console.print(fit_table(console, ["band", "tasks", "kept"], rows, title="difficulty bands (train tasks)"))
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
    pool_grading_versions: PoolGrading = False,
) -> None:
    """Write a self-contained HTML report of a run (optionally against a baseline run)."""
    pricing = _pricing(price_in, price_out)
    try:
        target = write_report(
            run_dir,
            baseline,
            k_max=k_max,
            out=out,
            pricing=pricing,
            pool_grading_versions=pool_grading_versions,
        )
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(str(target))


# -- campaigns: eval and probe -------------------------------------------------------------------------------

PolicyOpt = Annotated[
    str,
    typer.Option(
        "--policy",
        # no square brackets: the help is Rich markup, where `[@BASE_URL]` would vanish as a style tag
        help="Policy spec, KIND:TARGET?opt=val&...: openai:MODEL or openai:MODEL@BASE_URL, local:smollm2, "
        "local:PATH, replay (the gold-action oracle), recorded:PATH.",
    ),
]
OutOpt = Annotated[
    Path, typer.Option("--out", help="Run directory (results.jsonl, run.json); reruns resume.")
]
DomainsOpt = Annotated[
    str | None,
    typer.Option(
        "--domains",
        help="Comma-separated domains (default: the benchmark's; a curriculum like starter only if named).",
    ),
]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids (default: all).")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, help="At most N tasks per domain (first by id).")
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Episodes running at once.")]
MaxTurnsOpt = Annotated[int, typer.Option("--max-turns", min=1, help="Policy turns per episode.")]
UserOpt = Annotated[
    str | None, typer.Option("--user", help="Simulated user: scripted or llm (default: the server's).")
]
RetriesOpt = Annotated[
    int, typer.Option("--retries", min=0, help="Retries of a rollout that hit a backend error.")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", min=0.001, help="Seconds one episode may take (then: backend error).")
]
SamplesOpt = Annotated[int, typer.Option("--samples", min=1, help="Best-of-N: candidates per trial.")]
SelectOpt = Annotated[
    str | None,
    typer.Option("--select", help="Best-of-N selection: majority or first-success-verified (oracle bound)."),
]


def _csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _campaign(options: Mapping[str, Any]) -> CampaignSummary:
    """Run the campaign of an `eval` or `probe` command and print its summary and the run's metrics.

    Args:
        options: the command's parameters (its `locals()`). Besides `out`, `api_key` and `quiet` they are
            `CampaignConfig` fields in the command line's spelling: comma-separated `domains` and `tasks`,
            `split` "all" for both, `timeout` for `timeout_s`; the config rejects any other name.
    """
    values = dict(options)
    out, api_key, quiet = values.pop("out"), values.pop("api_key"), values.pop("quiet")
    values |= {
        "domains": _csv(values["domains"]),
        "tasks": _csv(values["tasks"]),
        "split": _split(values["split"]),
        "timeout_s": values.pop("timeout"),
    }
    try:
        config = CampaignConfig.model_validate(values)
    except ValidationError as exc:
        raise invalid_options(exc) from None
    try:
        summary = evaluate(config, out, api_key=api_key, progress=not quiet)
    except (PolicySpecError, UnknownNameError, CampaignError, ClientError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    # short lines: a terminal would break one long line mid-word
    typer.echo(
        f"{summary.run} trials run in {summary.elapsed_s:.1f} s ({summary.rollouts} episodes, "
        f"{summary.retries} retries), {summary.skipped} already done\n"
        f"{summary.successes} solved, {summary.backend_errors} backend errors, "
        f"{summary.policy_errors} policy errors\n"
        f"results: {out / 'results.jsonl'}"
    )
    try:
        _print_metrics(compute_metrics(read_results(out)), str(out))
    except MixedGradingError as exc:
        typer.echo(f"no metrics: {exc}", err=True)
    _print_errors(summary)
    if summary.stopped:
        typer.echo(f"error: {summary.stopped}", err=True)
        raise typer.Exit(1)
    return summary


def _print_errors(summary: CampaignSummary) -> None:
    """Name what the unscored trials failed on: a policy that never ran must not read as a 0% agent."""
    if summary.policy_errors:
        typer.echo(
            f"{summary.policy_errors} trials ended in policy errors: the policy's endpoint failed and "
            "the model never played (not counted in pass@1)."
        )
    if summary.backend_errors:
        typer.echo(f"{summary.backend_errors} trials ended in backend errors (not counted).")
    if summary.policy_errors or summary.backend_errors:
        for cause, count in sorted(summary.error_causes.items(), key=lambda item: -item[1])[:3]:
            typer.echo(f"  {count} x {cause}")
        typer.echo("Fix the cause, then rerun the same command to retry them.")


def _split(value: str) -> str | None:
    if value not in ("train", "test", "all"):
        raise typer.BadParameter(f"split must be train, test or all, got {value!r}")
    return None if value == "all" else value


@app.command("eval")
def eval_command(
    policy: PolicyOpt,
    out: OutOpt,
    server: ServerOpt = DEFAULT_SERVER_URL,
    api_key: ApiKeyOpt = None,
    domains: DomainsOpt = None,
    split: Annotated[str, typer.Option("--split", help="train, test or all.")] = "test",
    trials: Annotated[int, typer.Option("--trials", min=1, help="Trials K of every task.")] = 4,
    concurrency: ConcurrencyOpt = 4,
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    max_turns: MaxTurnsOpt = 30,
    user: UserOpt = None,
    retries: RetriesOpt = 2,
    timeout: TimeoutOpt = 900.0,
    samples: SamplesOpt = 1,
    select: SelectOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Evaluate a policy: K trials of every selected task; rerun the same command to resume."""
    _campaign(locals())


@app.command("probe")
def probe_command(
    policy: PolicyOpt,
    out: OutOpt,
    server: ServerOpt = DEFAULT_SERVER_URL,
    api_key: ApiKeyOpt = None,
    domains: DomainsOpt = None,
    split: Annotated[str, typer.Option("--split", help="train, test or all.")] = "train",
    trials: Annotated[int, typer.Option("--trials", min=1, help="Probe trials n of every task.")] = 8,
    concurrency: ConcurrencyOpt = 4,
    tasks: TasksOpt = None,
    limit: LimitOpt = None,
    max_turns: MaxTurnsOpt = 30,
    user: UserOpt = None,
    retries: RetriesOpt = 2,
    timeout: TimeoutOpt = 900.0,
    quiet: QuietOpt = False,
) -> None:
    """Probe a base policy on the train split (8 trials a task) for `groundstate select RUN_DIR`."""
    _campaign(locals())
    typer.echo(f"next: groundstate select {out} --out pool.json --keep hard,medium")
