"""Evaluation runs for the viewer: where they are, what they scored, and their task × trial grids.

The server is told where runs live (`GROUNDSTATE_RUNS_DIRS`: run directories, or directories of them) and
reads each run's `results.jsonl` with the shared reader of the documented format; the figures come from the
shared counting core (`shared.metrics`), the same one `groundstate metrics` uses. Runs are looked up by
name among the discovered ones only, so a URL cannot name an arbitrary path. Directories are listed again on
every request: a campaign still running shows its latest lines.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from env_server.errors import GroundstateError, NotFoundError
from env_server.ui.charts import PALETTE, Chart, Series, line_chart
from shared.metrics import (
    TaskTally,
    bootstrap_bounds,
    default_k,
    mean_pass_at_k,
    mean_pass_hat_k,
    tally_tasks,
)
from shared.results import RESULTS_FILE, TrialResult, read_results

RUN_CONFIG = "run.json"
OVERALL = "all domains"


class UnknownRunError(NotFoundError, code="unknown-run"):
    """No configured runs directory holds a run of that name."""


class UnreadableRunError(GroundstateError, code="unreadable-run", status=422):
    """A run's results file is not a valid `results.jsonl`."""


def discover_runs(dirs: Iterable[Path]) -> dict[str, Path]:
    """The runs under `dirs` by name: a directory holding `results.jsonl`, or each child that does.

    Names are the directories' names; a later run with a name already taken gets `-2`, `-3`, ... appended,
    and so does a run called `compare` (the comparison page's path).
    """
    return discover_dirs(dirs, RESULTS_FILE, reserved=frozenset({"compare"}))


def discover_dirs(
    dirs: Iterable[Path], marker: str, reserved: frozenset[str] = frozenset()
) -> dict[str, Path]:
    """The directories holding the file `marker` by name: each of `dirs` that does, or those of its children.

    The one discovery rule of every kind of run the viewer shows (evaluation runs by `results.jsonl`,
    training runs by `curriculum.jsonl`): a page names a run by these names only, never by a path. A later
    directory with a name already taken, or a name in `reserved` (a page's own path), gets `-2`, `-3`, ...
    """
    runs: dict[str, Path] = {}
    for directory in dirs:
        if (directory / marker).is_file():
            candidates = [directory]
        elif directory.is_dir():
            candidates = sorted(c for c in directory.iterdir() if (c / marker).is_file())
        else:
            candidates = []
        for path in candidates:
            name, n = path.name, 1
            while name in runs or name in reserved:
                n += 1
                name = f"{path.name}-{n}"
            runs[name] = path
    return runs


def find_run(dirs: Iterable[Path], name: str) -> Path:
    """The run directory called `name`, or `UnknownRunError` listing the known names."""
    runs = discover_runs(dirs)
    if name not in runs:
        known = ", ".join(runs) or "none (set GROUNDSTATE_RUNS_DIRS)"
        raise UnknownRunError(f"unknown run '{name}' (known: {known})", field="run")
    return runs[name]


@dataclass
class Figures:
    """The headline figures of a group of tasks (one domain, or the whole run)."""

    group: str
    tasks: int
    trials: int
    successes: int
    backend_errors: int
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    policy_errors: int = 0
    pass_at_1_ci: tuple[float, float] | None = None


@dataclass
class Cell:
    """One trial of one task: its outcome and the episode to open."""

    trial: int
    outcome: str  # "pass" | "fail" | "error" (backend) | "policy" (policy endpoint) | "none"
    episode_id: str | None = None
    note: str = ""


@dataclass
class GridRow:
    """One task's trials in trial order, with its success rate over clean trials."""

    task_id: str
    domain: str
    cells: list[Cell]
    rate: float | None


@dataclass
class RunView:
    """Everything the campaign page shows of one run."""

    name: str
    path: Path
    config: dict[str, Any]
    k: int
    k_max: int
    figures: list[Figures]
    grid: list[GridRow]
    trials: int
    tallies: list[TaskTally] = field(repr=False)
    policy: str = ""
    best_of_n_lines: int = 0
    curricula: list[str] = field(default_factory=list)
    """The run's domains that are curricula, not benchmark (left out of the total row)."""
    error_causes: list[tuple[str, str, int]] = field(default_factory=list)
    """The unscored trials' (status, cause, count), most frequent first."""

    @property
    def overall(self) -> Figures:
        """The whole run's figures (the last row)."""
        return self.figures[-1]

    @property
    def policy_errors(self) -> int:
        """Trials whose policy endpoint failed, over the whole run (curricula included)."""
        return sum(t.policy_errors for t in self.tallies)

    @property
    def domains(self) -> list[str]:
        """The run's domains, by name."""
        return [f.group for f in self.figures[:-1]]


def load_run(name: str, path: Path, curricula: Iterable[str] = ()) -> RunView:
    """Read a run directory and compute what its page shows.

    Args:
        name: The run's name.
        path: Its directory.
        curricula: Domains that are curricula rather than benchmark (`Domain.benchmark` false): shown per
            domain, left out of the total row unless the run holds nothing else.
    """
    try:
        results = read_results(path)
    except (ValueError, OSError) as exc:
        raise UnreadableRunError(f"run '{name}': {exc}", field="run") from exc
    single = [r for r in results if r.sample == 0]
    tallies = tally_tasks(single)
    k = default_k(tallies)
    trials = 1 + max((r.trial for r in single), default=-1)
    config = read_run_config(path)
    present = {t.domain for t in tallies}
    excluded = sorted(present & set(curricula)) if present - set(curricula) else []
    causes = Counter((r.status, (r.error or "(no message)")[:200]) for r in single if r.status != "scored")
    return RunView(
        name=name,
        path=path,
        config=config,
        policy=str(config.get("policy") or ", ".join(sorted({r.policy for r in results}))),
        k=k,
        k_max=k,
        figures=figures_of(tallies, k, excluded),
        grid=grid_of(single, trials),
        trials=trials,
        tallies=tallies,
        best_of_n_lines=len(results) - len(single),
        curricula=excluded,
        error_causes=[(status, cause, n) for (status, cause), n in causes.most_common(5)],
    )


def read_run_config(path: Path) -> dict[str, Any]:
    """The config in a run's `run.json` (`eval` and `train` nest it under `config`), and its start time.

    Empty when there is no readable `run.json`: the figures come from the run's own lines, the config only
    labels them.
    """
    try:
        data = json.loads((path / RUN_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    config = data.get("config")
    if not isinstance(config, dict):
        return data
    invocations = data.get("invocations")  # eval's record of each command that appended to the run
    extra = {
        "created_at": data.get("created_at"),
        "invocations": len(invocations) if isinstance(invocations, list) else None,
    }
    return config | {k: v for k, v in extra.items() if v is not None}


def figures_of(tallies: Sequence[TaskTally], k: int, excluded: Iterable[str] = ()) -> list[Figures]:
    """Figures per domain (by name) and, last, for the whole run without the `excluded` (curricula)."""
    by_domain: dict[str, list[TaskTally]] = defaultdict(list)
    for tally in tallies:
        by_domain[tally.domain].append(tally)
    left_out = set(excluded)
    groups = [*sorted(by_domain.items()), (OVERALL, [t for t in tallies if t.domain not in left_out])]
    return [_figures(group, members, k) for group, members in groups]


def _figures(group: str, tallies: Sequence[TaskTally], k: int) -> Figures:
    clean = [t for t in tallies if t.trials]
    return Figures(
        group=group,
        tasks=len(clean),
        trials=sum(t.trials for t in clean),
        successes=sum(t.successes for t in clean),
        backend_errors=sum(t.backend_errors for t in tallies),
        policy_errors=sum(t.policy_errors for t in tallies),
        pass_at_1=mean_pass_at_k(clean, 1),
        pass_at_1_ci=bootstrap_bounds([t.successes / t.trials for t in clean]),
        pass_at_k=mean_pass_at_k(clean, k),
        pass_hat_k=mean_pass_hat_k(clean, k),
    )


def grid_of(results: Sequence[TrialResult], trials: int) -> list[GridRow]:
    """One row per task (by domain, then id), one cell per trial index; absent trials are empty cells."""
    by_task: dict[str, dict[int, TrialResult]] = defaultdict(dict)
    domains: dict[str, str] = {}
    for r in results:
        by_task[r.task_id][r.trial] = r
        domains[r.task_id] = r.domain
    rows = []
    for task_id in sorted(by_task, key=lambda t: (domains[t], t)):
        cells = [_cell(i, by_task[task_id].get(i)) for i in range(trials)]
        clean = [c for c in cells if c.outcome in ("pass", "fail")]
        rate = sum(c.outcome == "pass" for c in clean) / len(clean) if clean else None
        rows.append(GridRow(task_id, domains[task_id], cells, rate))
    return rows


def _cell(trial: int, result: TrialResult | None) -> Cell:
    if result is None:
        return Cell(trial, "none", note="not run")
    if result.status == "policy_error":
        return Cell(trial, "policy", result.episode_id, f"policy error: {result.error or ''}")
    if result.status == "backend_error":
        return Cell(trial, "error", result.episode_id, f"backend error: {result.error or ''}")
    if result.reward == 1:
        return Cell(trial, "pass", result.episode_id, "reward 1")
    failed = ", ".join(c.name for c in result.failed_checks) or "reward 0"
    return Cell(
        trial, "fail", result.episode_id, f"failed: {failed}" + (f"; {result.error}" if result.error else "")
    )


def trial_of(dirs: Iterable[Path], name: str, episode_id: str) -> TrialResult | None:
    """The line of run `name` that played `episode_id` (None when the run holds no such line)."""
    try:
        results = read_results(find_run(dirs, name))
    except (ValueError, OSError):
        return None
    return next((r for r in reversed(results) if r.episode_id == episode_id), None)


def curves(runs: Sequence[RunView], k_max: int) -> list[Chart]:
    """pass@k and pass^k over k = 1..k_max, a line per domain and one for all domains.

    With two runs the second's lines are dashed and labelled with its name.
    """
    domains = sorted({d for run in runs for d in run.domains})
    colours = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate([OVERALL, *domains])}
    charts = []
    for title, measure in (("pass@k", mean_pass_at_k), ("pass^k", mean_pass_hat_k)):
        series = []
        for index, run in enumerate(runs):
            total = [t for t in run.tallies if t.domain not in run.curricula]
            groups = [(OVERALL, total)] + [
                (d, [t for t in run.tallies if t.domain == d]) for d in run.domains
            ]
            for group, tallies in groups:
                values = [(k, v) for k in range(1, k_max + 1) if (v := measure(tallies, k)) is not None]
                label = group if len(runs) == 1 else f"{group} ({run.name})"
                series.append(Series(label, colours[group], values, dashed=index > 0))
        charts.append(line_chart(title, series, k_max))
    return charts
