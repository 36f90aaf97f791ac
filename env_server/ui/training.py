"""Training runs for the viewer: where they are, and what their adaptive curriculum did step by step.

`groundstate train local --curriculum adaptive` writes `curriculum.jsonl` (a `StepRecord` per step) and
`curriculum.json` (the state) into its output directory. A training run is found like an evaluation run
(`runs.discover_dirs`, under `GROUNDSTATE_RUNS_DIRS`, by name only, so a URL cannot name an arbitrary path)
but by its `curriculum.jsonl`, and read with the shared reader of those files (`shared.curriculum`): the
server never imports the trainer. Everything is read again on every request, so a run still training shows
its latest step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from env_server.ui.charts import PALETTE, Chart, Series, Sparkline, line_chart, sparkline
from env_server.ui.runs import UnknownRunError, UnreadableRunError, discover_dirs, read_run_config
from shared.curriculum import (
    CURRICULUM_LOG,
    CurriculumState,
    StepRecord,
    family_of,
    read_curriculum_log,
    read_curriculum_state,
)

TOP_TASKS = 8
"""Tasks whose posterior gets a line of its own in the chart (the most drawn); the table shows them all."""

Status = Literal["active", "untried", "retired"]
STATUS_ORDER: dict[Status, int] = {"active": 0, "untried": 1, "retired": 2}


def discover_training_runs(dirs: Iterable[Path]) -> dict[str, Path]:
    """The training runs under `dirs` by name: each directory holding `curriculum.jsonl`, or its children.

    Names follow the evaluation runs' rule (`runs.discover_dirs`): directory names, `-2`, `-3`, ... for
    repeats.
    """
    return discover_dirs(dirs, CURRICULUM_LOG)


def find_training_run(dirs: Iterable[Path], name: str) -> Path:
    """The training run directory called `name`, or `UnknownRunError` listing the known names."""
    runs = discover_training_runs(dirs)
    if name not in runs:
        known = ", ".join(runs) or "none (set GROUNDSTATE_RUNS_DIRS)"
        raise UnknownRunError(f"unknown training run '{name}' (known: {known})", field="run")
    return runs[name]


@dataclass
class TaskRow:
    """One task of the curriculum: its current posterior and history, and its posterior over the steps."""

    task_id: str
    family: str | None
    status: Status
    mean: float | None
    """The current posterior mean (the state's, decayed to the last step), else the last one logged."""
    drawn: int | None
    """Groups played over the whole curriculum (from the state; None before it was saved)."""
    last_drawn: int | None
    retired_at: int | None
    added_at: int | None
    """The step whose record admitted it (tasks added while training; the starting pool has none)."""
    history: list[tuple[int, float]]
    """(step, posterior mean) at every logged step it was played in."""
    spark: Sparkline | None = None


@dataclass
class CurriculumView:
    """Everything a training run's curriculum page shows."""

    name: str
    path: Path
    config: dict[str, Any]
    records: list[StepRecord]
    state: CurriculumState | None
    rows: list[TaskRow]
    charts: list[Chart] = field(default_factory=list)
    task_chart: Chart | None = None

    @property
    def last(self) -> StepRecord | None:
        """The latest step's record (None before the first step)."""
        return self.records[-1] if self.records else None

    @property
    def first_step(self) -> int:
        """The first logged step (above 1 for a run resumed from a checkpoint into a new directory)."""
        return self.records[0].step if self.records else 0

    @property
    def retired(self) -> int:
        """Tasks retired over the logged steps."""
        return sum(len(r.retired) for r in self.records)

    @property
    def added(self) -> int:
        """Tasks admitted over the logged steps."""
        return sum(len(r.added) for r in self.records)

    @property
    def minted(self) -> int:
        """Tasks the server minted for the run over the logged steps."""
        return sum(r.minted for r in self.records)

    @property
    def informative_share(self) -> float | None:
        """The share of all logged groups that had both outcomes."""
        groups = sum(r.groups for r in self.records)
        return sum(r.informative_groups for r in self.records) / groups if groups else None

    @property
    def statuses(self) -> dict[Status, int]:
        """How many tasks are active, untried and retired."""
        counts: dict[Status, int] = {"active": 0, "untried": 0, "retired": 0}
        for row in self.rows:
            counts[row.status] += 1
        return counts

    @property
    def model(self) -> str:
        """The model the run trained (its `run.json`), or an empty string."""
        return str(self.config.get("model") or "")


def load_training_run(name: str, path: Path) -> CurriculumView:
    """Read a training run's curriculum files and lay out what its page shows.

    Raises:
        UnreadableRunError: A log line or the state is not valid, a step is missing, or the files vanished.
    """
    try:
        records = read_curriculum_log(path)
        state = read_curriculum_state(path)
    except (ValueError, OSError) as exc:
        raise UnreadableRunError(f"training run '{name}': {exc}", field="run") from exc
    view = CurriculumView(
        name=name,
        path=path,
        config=read_run_config(path),
        records=records,
        state=state,
        rows=task_rows(records, state),
    )
    if records:
        view.charts = step_charts(records)
        view.task_chart = task_chart(view.rows, records)
        for row in view.rows:
            if row.history:
                row.spark = sparkline(row.history, records[0].step, records[-1].step)
    return view


def task_rows(records: list[StepRecord], state: CurriculumState | None) -> list[TaskRow]:
    """One row per task the state or the log knows, active first (most drawn first), then untried, retired."""
    history: dict[str, list[tuple[int, float]]] = defaultdict(list)
    retired: dict[str, int] = {}
    added: dict[str, int] = {}
    for record in records:
        for task_id, mean in record.tasks.items():
            history[task_id].append((record.step, mean))
        retired.update({t: record.step for t in record.retired})
        added.update({t: record.step for t in record.added})
    evidence = state.tasks if state is not None else {}
    rows = []
    for task_id in sorted(set(evidence) | set(history) | set(retired) | set(added)):
        seen = history.get(task_id, [])
        known = evidence.get(task_id)
        retired_at = known.retired if known is not None else retired.get(task_id)
        drawn = known.drawn if known is not None else None
        status: Status = "retired" if retired_at is not None else "active" if (drawn or seen) else "untried"
        rows.append(
            TaskRow(
                task_id=task_id,
                family=family_of(task_id),
                status=status,
                mean=known.mean if known is not None else (seen[-1][1] if seen else None),
                drawn=drawn,
                last_drawn=known.last_drawn if known is not None else (seen[-1][0] if seen else None),
                retired_at=retired_at,
                added_at=added.get(task_id),
                history=seen,
            )
        )
    rows.sort(
        key=lambda r: (STATUS_ORDER[r.status], -(r.drawn or len(r.history)), r.retired_at or 0, r.task_id)
    )
    return rows


def step_charts(records: list[StepRecord]) -> list[Chart]:
    """Charts over steps: band and active tasks, what changed in the pool, informative groups, families."""
    first, last = records[0].step, records[-1].step
    retired, cumulative = 0, []
    for record in records:
        retired += len(record.retired)
        cumulative.append((record.step, float(retired)))
    pool = [
        Series("band", PALETTE[0], [(r.step, float(r.band)) for r in records]),
        Series("active", PALETTE[1], [(r.step, float(r.active)) for r in records]),
    ]
    changes = [  # a chart of their own: beside a pool of a hundred tasks, a few a step would lie flat on 0
        Series("retired (cumulative)", PALETTE[5], cumulative),
        Series("added", PALETTE[3], [(r.step, float(len(r.added))) for r in records]),
        Series("minted", PALETTE[4], [(r.step, float(r.minted)) for r in records], dashed=True),
    ]
    informative = [(r.step, r.informative_groups / r.groups) for r in records if r.groups]
    charts = [
        line_chart("Learning band and active tasks", pool, last, k_min=first, x_label="step", scale="count"),
        line_chart(
            "Tasks retired, added and minted", changes, last, k_min=first, x_label="step", scale="count"
        ),
        line_chart(
            "Informative groups",
            [Series("groups with both outcomes", PALETTE[0], informative)],
            last,
            k_min=first,
            x_label="step",
        ),
    ]
    families = sorted({f for r in records for f in r.families})
    if families:
        series = [
            Series(
                family,
                PALETTE[i % len(PALETTE)],
                [(r.step, r.families[family]) for r in records if family in r.families],
                dashed=i >= len(PALETTE),  # past eight families the colours repeat, dashed
            )
            for i, family in enumerate(families)
        ]
        charts.append(line_chart("Family posterior means", series, last, k_min=first, x_label="step"))
    return charts


def task_chart(rows: list[TaskRow], records: list[StepRecord]) -> Chart | None:
    """The posterior over steps of the `TOP_TASKS` most drawn tasks (None when no task was played)."""
    played = sorted((r for r in rows if r.history), key=lambda r: (-(r.drawn or len(r.history)), r.task_id))
    if not played:
        return None
    series = [
        Series(row.task_id, PALETTE[i % len(PALETTE)], row.history)
        for i, row in enumerate(played[:TOP_TASKS])
    ]
    title = f"Posterior of the {len(series)} most drawn tasks"
    return line_chart(title, series, records[-1].step, k_min=records[0].step, x_label="step")
