"""The HTML report of a run: one self-contained file (inline CSS, inline SVG plots), optionally vs a baseline.

Sections: the headline metrics, the per-domain table, pass@k and pass^k curves over k, the difficulty band
histogram, the failure breakdown (missing / wrong / extra changes per table, failed checks by kind, backend
errors) and, with a baseline run, the side-by-side deltas (tasks gained and lost, per-domain changes, the
largest per-task moves). Plots are drawn with matplotlib's object API (no pyplot, no global backend).
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from trainer.metrics import (
    GroupMetrics,
    Metrics,
    Pricing,
    TaskTally,
    compute_metrics,
    default_k,
    mean_pass_at_k,
    mean_pass_hat_k,
    tally_tasks,
)
from trainer.results import TrialResult, read_results, results_path
from trainer.selection import ASSESSMENTS, DEFAULT_MIN_TRIALS, band_of

__all__ = ["REPORT_FILE", "write_report"]

REPORT_FILE = "report.html"
"""The report's file name inside the run directory, unless told otherwise."""

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1180px;
color:#1f2328;padding:0 1rem}h1{font-size:1.6rem;margin-bottom:.2rem}
h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
.meta{color:#59636e;font-size:.9rem}table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:right}th{background:#f6f8fa}
td:first-child,th:first-child{text-align:left}.pos{color:#1a7f37;font-weight:600}
.neg{color:#cf222e;font-weight:600}.plots{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
.plots svg{max-width:560px;height:auto}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .8rem}
.note{color:#59636e;font-size:.85rem}ul.ids{columns:3;font-size:.85rem}
"""

_Row = tuple[str, Callable[[GroupMetrics], float | int | None], str, int]
"""(label, getter, format, direction): direction +1 when higher is better, -1 when lower is, 0 neutral."""
_HEADLINE: list[_Row] = [
    ("pass@1", lambda m: m.pass_at_1, "pct", 1),
    ("pass@k", lambda m: m.pass_at_k, "pct", 1),
    ("pass^k", lambda m: m.pass_hat_k, "pct", 1),
    ("observed k/k (tasks)", lambda m: m.observed_k_of_k, "int", 1),
    ("observed k/k rate", lambda m: m.observed_k_of_k_rate, "pct", 1),
    ("solved at least once (tasks)", lambda m: m.solved_at_least_once, "int", 1),
    ("solved at least once rate", lambda m: m.solved_at_least_once_rate, "pct", 1),
    ("tasks", lambda m: m.tasks, "int", 0),
    ("clean trials", lambda m: m.trials, "int", 0),
    ("backend errors", lambda m: m.backend_errors, "int", -1),
    ("policy errors", lambda m: m.policy_errors, "int", -1),
    ("mean turns", lambda m: m.mean_turns, "num", 0),
    ("mean tool calls", lambda m: m.mean_tool_calls, "num", 0),
    ("mean tokens in", lambda m: m.mean_tokens_in, "num", 0),
    ("mean tokens out", lambda m: m.mean_tokens_out, "num", 0),
    ("cost per successful attempt ($)", lambda m: m.cost.per_success if m.cost else None, "cost", -1),
    ("cost per reliable task ($)", lambda m: m.cost.per_reliable_task if m.cost else None, "cost", -1),
]


def write_report(
    run_dir: str | os.PathLike[str],
    baseline_dir: str | os.PathLike[str] | None = None,
    *,
    k_max: int | None = None,
    out: str | os.PathLike[str] | None = None,
    pricing: Pricing | None = None,
    min_trials: int = DEFAULT_MIN_TRIALS,
    pool_grading_versions: bool = False,
) -> Path:
    """Write the HTML report of a run.

    Args:
        run_dir: The run directory (holding `results.jsonl`), or the results file itself.
        baseline_dir: Another run to compare against, if any.
        k_max: The largest k of the pass@k / pass^k curves; by default the fewest clean trials of any task
            (so every task counts at every k).
        out: Where to write; by default `report.html` in the run directory.
        pricing: Token prices for the cost rows; without them those rows show a dash.
        min_trials: The minimum of clean trials to band a task in the histogram.
        pool_grading_versions: Pool results of different grading versions instead of refusing (see
            `trainer.metrics.compute_metrics`).

    Returns:
        The path of the written report.

    Raises:
        FileNotFoundError: A run has no results file.
        MixedGradingError: A run's results carry different grading versions and pooling was not asked for.
    """
    run_path = Path(run_dir)
    results = read_results(run_path)
    base_results = read_results(baseline_dir) if baseline_dir is not None else None
    tallies = tally_tasks(results)
    base_tallies = tally_tasks(base_results) if base_results is not None else None
    # one k for both runs, so their pass@k, pass^k and k/k compare like with like
    k = min(default_k(tallies), default_k(base_tallies)) if base_tallies is not None else default_k(tallies)
    pool = pool_grading_versions
    metrics = compute_metrics(results, k=k, pricing=pricing, pool_grading_versions=pool)
    base_metrics = (
        compute_metrics(base_results, k=k, pricing=pricing, pool_grading_versions=pool)
        if base_results is not None
        else None
    )
    k_max = k_max or k
    ids = {t.task_id for t in tallies}
    base_ids = {t.task_id for t in base_tallies} if base_tallies is not None else ids
    common = ids & base_ids
    if not common:
        base_metrics = None  # no task in common: a Δ between them would compare nothing with nothing
    policies = ", ".join(sorted({r.policy for r in results})) or "—"
    title = f"groundstate report — {run_path.name}"
    sections = [
        f"<h1>{escape(title)}</h1><p class='meta'>policy: {escape(policies)} · {len(results)} records · k = "
        f"{metrics.k} · generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
        + (f" · baseline: {escape(Path(baseline_dir).name)}" if baseline_dir is not None else "")
        + "</p>",
        _policy_warning(metrics, results),
    ]
    if base_results is not None and common and ids != base_ids:
        # different task sets: the Δ that means something is the one over the tasks both runs played
        sections.append(_overlap_warning(ids, base_ids))
        overlap = compute_metrics(
            [r for r in results if r.task_id in common], k=k, pricing=pricing, pool_grading_versions=pool
        )
        base_overlap = compute_metrics(
            [r for r in base_results if r.task_id in common], k=k, pricing=pricing, pool_grading_versions=pool
        )
        sections.append(f"<h2>Headline on the {len(common)} tasks in both runs</h2>")
        sections.append(_headline(overlap, base_overlap))
        sections.append("<h2>Headline on every task of each run</h2>" + _headline(metrics, base_metrics))
    elif base_results is not None and not common:
        sections.append(_overlap_warning(ids, base_ids))
        sections.append("<h2>Headline</h2>" + _headline(metrics, base_metrics))
    else:
        sections.append("<h2>Headline</h2>" + _headline(metrics, base_metrics))
    sections += [
        "<h2>Per domain</h2>" + _domain_table(metrics, base_metrics),
        "<h2>pass@k and pass^k</h2>" + _curves(tallies, base_tallies, k_max),
        "<h2>Difficulty bands</h2>" + _bands(tallies, min_trials),
        "<h2>Failures</h2>" + _failures(results),
    ]
    if metrics.best_of_n is not None:
        sections.append(
            f"<h2>Best-of-{metrics.best_of_n.samples_per_trial}</h2>" + _headline(metrics.best_of_n)
        )
    if base_tallies is not None:
        sections.append("<h2>Compared with the baseline</h2>" + _comparison(tallies, base_tallies, k))
    page = (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_CSS}</style></head><body>{''.join(sections)}</body></html>\n"
    )
    target = Path(out) if out is not None else results_path(run_path).parent / REPORT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def _policy_warning(metrics: Metrics, results: Sequence[TrialResult]) -> str:
    """A warning at the top when the policy's endpoint failed: the model never played those trials."""
    if not metrics.policy_errors:
        return ""
    causes = Counter((r.error or "(no message)")[:200] for r in results if r.status == "policy_error")
    cause, count = causes.most_common(1)[0]
    return (
        f"<p class='warn' id='policy-errors'><strong>{metrics.policy_errors} trials ended in policy "
        "errors</strong>"
        " — the policy's endpoint failed and the model never played them; they are left out of every figure"
        f" below. Most common cause ({count}): <code>{escape(cause)}</code></p>"
    )


def _overlap_warning(ids: set[str], base_ids: set[str]) -> str:
    """A warning at the top when the two runs played different tasks: their whole-run figures differ."""
    common = ids & base_ids
    return (
        "<p class='warn' id='overlap'><strong>The runs played different task sets:</strong> "
        f"{len(common)} tasks in both, {len(ids - base_ids)} only in this run, {len(base_ids - ids)} only "
        "in the baseline. "
        + (
            "The first headline compares the two on the tasks in common; the whole-run figures measure "
            "different tasks."
            if common
            else "No task in common: no Δ is shown."
        )
        + "</p>"
    )


def _fmt(value: float | int | None, kind: str) -> str:
    if value is None:
        return "—"
    return {
        "pct": lambda v: f"{v * 100:.2f}%",
        "int": lambda v: f"{v:,}",
        "num": lambda v: f"{v:,.1f}",
        "cost": lambda v: f"{v:,.4f}",
    }[kind](value)


def _delta(new: float | int | None, old: float | int | None, kind: str, better: int = 1) -> str:
    if new is None or old is None:
        return "<td>—</td>"
    diff = new - old
    text = (
        f"{diff * 100:+.2f} pp" if kind == "pct" else f"{diff:+,.4f}" if kind == "cost" else f"{diff:+,.1f}"
    )
    if kind == "int":
        text = f"{diff:+,}"
    css = "pos" if diff * better > 0 else "neg" if diff * better < 0 else ""
    return f"<td class='{css}'>{text}</td>"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _headline(m: GroupMetrics, base: GroupMetrics | None = None) -> str:
    rows = []
    for label, get, kind, better in _HEADLINE:
        if m.k == 1 and label in ("pass@k", "pass^k"):
            continue  # pass@1 again: listed once
        value = _fmt(get(m), kind)
        if label == "pass@1" and m.pass_at_1_ci95 is not None:
            ci = m.pass_at_1_ci95
            value += f" <span class='note'>[{ci.low * 100:.2f}%, {ci.high * 100:.2f}%]</span>"
        label = label.replace("k", str(m.k)) if label in ("pass@k", "pass^k") else label
        rows.append(
            [escape(label), value]
            + ([_fmt(get(base), kind), _delta(get(m), get(base), kind, better)] if base else [])
        )
    header = ["metric", "this run"] + (["baseline", "Δ"] if base else [])
    return _table(header, rows) + "<p class='note'>pass@1 interval: 95% percentile bootstrap over tasks.</p>"


def _domain_table(m: Metrics, base: Metrics | None) -> str:
    rows = []
    for domain, d in m.by_domain.items():
        ci = d.pass_at_1_ci95
        row = [
            escape(domain),
            _fmt(d.tasks, "int"),
            _fmt(d.trials, "int"),
            _fmt(d.backend_errors, "int"),
            _fmt(d.policy_errors, "int"),
            _fmt(d.pass_at_1, "pct") + (f" [{ci.low * 100:.1f}, {ci.high * 100:.1f}]" if ci else ""),
            *([_fmt(d.pass_at_k, "pct"), _fmt(d.pass_hat_k, "pct")] if m.k > 1 else []),
            f"{d.observed_k_of_k} / {d.tasks_with_k_trials}",
            f"{d.solved_at_least_once} / {d.tasks}",
        ]
        if base is not None:
            b = base.by_domain.get(domain)
            row += [
                _delta(d.pass_at_1, b.pass_at_1 if b else None, "pct"),
                _delta(d.observed_k_of_k, b.observed_k_of_k if b else None, "int"),
            ]
        rows.append(row)
    header = ["domain", "tasks", "trials", "backend errors", "policy errors", "pass@1 [95%]"]
    header += [f"pass@{m.k}", f"pass^{m.k}"] if m.k > 1 else []
    header += ["k/k", "solved ≥ 1"] + (["Δ pass@1", "Δ k/k tasks"] if base else [])
    return _table(header, rows)


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "groundstate"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _curves(tallies: Sequence[TaskTally], base: Sequence[TaskTally] | None, k_max: int) -> str:
    ks = list(range(1, k_max + 1))
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    for label, data, style in (("this run", tallies, "-"), ("baseline", base, "--")):
        if data is None:
            continue
        for name, fn, color in (
            ("pass@k", mean_pass_at_k, "#0969da"),
            ("pass^k", mean_pass_hat_k, "#bf3989"),
        ):
            values = [fn(data, k) for k in ks]
            points = [(k, v * 100) for k, v in zip(ks, values, strict=True) if v is not None]
            if points:
                ax.plot(
                    *zip(*points, strict=True),
                    style,
                    marker="o",
                    ms=3,
                    color=color,
                    label=f"{name} ({label})",
                )
            if k_max == 1:  # one point per curve: say its value (pass@1 and pass^1 are one number)
                for x, y in points:
                    ax.annotate(f"{y:.1f}%", (x, y), textcoords="offset points", xytext=(8, 0), fontsize=8)
    # a margin of half a step each side: at k = 1 the single points sit mid-chart, not on its edge
    ax.set(xlabel="k", ylabel="%", ylim=(0, 100), xlim=(0.5, k_max + 0.5), title="pass@k and pass^k")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # no curve when no trial was clean (every one an error)
        ax.legend(fontsize=8)
    note = "<p class='note'>Averaged over the tasks with at least k clean trials.</p>"
    return f"<div class='plots'>{_svg(fig)}</div>{note}"


def _bands(tallies: Sequence[TaskTally], min_trials: int) -> str:
    counts: Counter[tuple[str, str]] = Counter(
        (band_of(t, min_trials=min_trials).band, t.split) for t in tallies
    )
    labels = list(ASSESSMENTS)
    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    bottom = [0] * len(labels)
    for split, color in (("train", "#0969da"), ("test", "#9a6700")):
        heights = [counts[(b, split)] for b in labels]
        ax.bar(labels, heights, bottom=bottom, color=color, label=split)
        bottom = [x + h for x, h in zip(bottom, heights, strict=True)]
    ax.set(ylabel="tasks", title="Jeffreys posterior bands")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8)
    rows = [[b, str(counts[(b, "train")]), str(counts[(b, "test")])] for b in labels]
    note = (
        "<p class='note'>Band = most posterior mass of Beta(k+½, n−k+½); fewer than "
        f"{min_trials} clean trials: insufficient.</p>"
    )
    return f"<div class='plots'>{_svg(fig)}{_table(['band', 'train', 'test'], rows)}</div>{note}"


def _failures(results: Sequence[TrialResult]) -> str:
    single = [r for r in results if r.sample == 0]
    failed = [r for r in single if r.reward == 0]
    per_table: dict[str, Counter[str]] = {}
    checks: Counter[str] = Counter()
    for r in failed:
        for entry in r.diff:
            per_table.setdefault(entry.table, Counter())[entry.kind] += 1
        for kind in {c.name.split(":", 1)[0] for c in r.failed_checks if not c.passed}:
            checks[kind] += 1
    table_rows = sorted(per_table.items(), key=lambda item: -sum(item[1].values()))
    diff_html = _table(
        ["table", "missing", "wrong", "extra"],
        [[escape(t), str(c["missing"]), str(c["wrong"]), str(c["extra"])] for t, c in table_rows],
    )
    check_html = _table(["failed check", "trials"], [[escape(k), str(v)] for k, v in checks.most_common()])
    errors = Counter((r.status, (r.error or "(no message)")[:160]) for r in single if r.status != "scored")
    error_html = _table(
        ["outcome", "cause", "trials"],
        [[escape(s.replace("_", " ")), escape(e), str(n)] for (s, e), n in errors.most_common(10)],
    )
    return (
        f"<p>{len(failed)} failed of {sum(1 for r in single if r.reward is not None)} clean trials.</p>"
        f"<h3>State differences per table</h3>{diff_html}<h3>Failed checks</h3>{check_html}"
        f"<h3>Backend and policy errors (excluded from the metrics)</h3>{error_html}"
    )


def _ids(ids: Sequence[str]) -> str:
    return (
        "<ul class='ids'>" + "".join(f"<li>{escape(i)}</li>" for i in ids) + "</ul>" if ids else "<p>none</p>"
    )


def _comparison(tallies: Sequence[TaskTally], base: Sequence[TaskTally], k: int) -> str:
    now = {t.task_id: t for t in tallies if t.trials}
    before = {t.task_id: t for t in base if t.trials}
    common = sorted(now.keys() & before.keys())
    parts = [
        f"<p>{len(common)} tasks in both runs; {len(now.keys() - before.keys())} only in this run, "
        f"{len(before.keys() - now.keys())} only in the baseline.</p>"
    ]
    if not common:
        parts.append(
            "<p class='note'>No task in common: no Δ is shown (the runs measure different tasks).</p>"
        )
        return "".join(parts)
    criteria: list[tuple[str, Callable[[TaskTally], bool]]] = [
        ("solved at least once", lambda t: t.successes > 0),
        (f"every trial succeeded (k/k, k = {k})", lambda t: t.trials >= k and t.successes == t.trials),
    ]
    for name, ok in criteria:
        gained = [i for i in common if ok(now[i]) and not ok(before[i])]
        lost = [i for i in common if ok(before[i]) and not ok(now[i])]
        parts.append(
            f"<h3>{escape(name)}: {len(gained)} tasks gained, {len(lost)} tasks lost</h3>"
            f"<p>Gained:</p>{_ids(gained)}<p>Lost:</p>{_ids(lost)}"
        )
    moves = sorted(common, key=lambda i: -abs((now[i].pass_rate or 0) - (before[i].pass_rate or 0)))[:20]
    rows = [
        [
            escape(i),
            f"{before[i].successes}/{before[i].trials}",
            f"{now[i].successes}/{now[i].trials}",
            _delta(now[i].pass_rate, before[i].pass_rate, "pct"),
        ]
        for i in moves
        if now[i].pass_rate != before[i].pass_rate
    ]
    parts.append(
        "<h3>Largest per-task changes</h3>" + _table(["task", "baseline", "this run", "Δ pass rate"], rows)
    )
    return "".join(parts)
