"""`/ui/campaigns`: evaluation runs from `GROUNDSTATE_RUNS_DIRS` — figures, curves, grids, comparisons."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Query, Request, Response

from env_server.api.deps import RegistryDep, SettingsDep
from env_server.errors import GroundstateError, InvalidRequestError
from env_server.ui.pages import page_router, render
from env_server.ui.runs import Figures, GridRow, RunView, curves, discover_runs, find_run, load_run

router = page_router("/ui/campaigns")


def _curricula(registry: RegistryDep) -> list[str]:
    """The served domains that are curricula (left out of a run's total unless it holds nothing else)."""
    return [d.name for d in registry.domains if not d.benchmark]


@router.get("")
def campaign_list(request: Request, settings: SettingsDep, registry: RegistryDep) -> Response:
    """Every run found under the configured directories, with its headline figures (or why not)."""
    runs: list[tuple[str, RunView | None, str | None]] = []
    curricula = _curricula(registry)
    for name, path in discover_runs(settings.runs_dirs).items():
        try:
            runs.append((name, load_run(name, path, curricula), None))
        except GroundstateError as exc:
            runs.append((name, None, exc.message))
    return render(request, "campaigns.html", runs=runs, dirs=settings.runs_dirs)


@dataclass
class CompareRow:
    """One task in two runs: each run's cells and success rate, and the change between them."""

    task_id: str
    domain: str
    a: GridRow | None
    b: GridRow | None

    @property
    def change(self) -> float | None:
        """B's success rate minus A's, when both ran the task cleanly."""
        if self.a is None or self.b is None or self.a.rate is None or self.b.rate is None:
            return None
        return self.b.rate - self.a.rate


@router.get("/compare")
def compare(
    request: Request,
    settings: SettingsDep,
    registry: RegistryDep,
    run: Annotated[list[str] | None, Query(description="Exactly two run names.")] = None,
) -> Response:
    """Two runs side by side: figures with their changes, overlaid curves, and the grids task by task."""
    run = run or []
    if len(run) != 2:
        raise InvalidRequestError(f"choose exactly two runs to compare, got {len(run)}", field="run")
    a, b = (load_run(name, find_run(settings.runs_dirs, name), _curricula(registry)) for name in run)
    figures_b = {f.group: f for f in b.figures}
    figures: list[tuple[str, Figures | None, Figures | None]] = [
        (f.group, f, figures_b.pop(f.group, None)) for f in a.figures[:-1]
    ]
    figures += [(g, None, f) for g, f in figures_b.items() if g != b.overall.group]
    figures.append((a.overall.group, a.overall, b.overall))
    rows_a, rows_b = {r.task_id: r for r in a.grid}, {r.task_id: r for r in b.grid}
    rows = [
        CompareRow(t, (rows_a.get(t) or rows_b[t]).domain, rows_a.get(t), rows_b.get(t))
        for t in sorted(set(rows_a) | set(rows_b))
    ]
    rows.sort(key=lambda r: (-(abs(r.change) if r.change is not None else -1), r.domain, r.task_id))
    moves = {
        "better": sum(1 for r in rows if r.change is not None and r.change > 0),
        "worse": sum(1 for r in rows if r.change is not None and r.change < 0),
        "same": sum(1 for r in rows if r.change == 0),
    }
    return render(
        request,
        "compare.html",
        a=a,
        b=b,
        figures=figures,
        charts=curves([a, b], min(a.k_max, b.k_max)),
        rows=rows,
        moves=moves,
        known_tasks=_known(registry, rows),
    )


@router.get("/{name}")
def campaign_page(request: Request, name: str, settings: SettingsDep, registry: RegistryDep) -> Response:
    """One run: config, per-domain figures, pass@k and pass^k curves, the task × trial grid."""
    view = load_run(name, find_run(settings.runs_dirs, name), _curricula(registry))
    return render(
        request,
        "campaign.html",
        run=view,
        charts=curves([view], view.k_max),
        known_tasks=_known(registry, view.grid),
    )


def _known(registry: RegistryDep, rows: list[GridRow] | list[CompareRow]) -> set[str]:
    """The tasks of `rows` this server serves (the others get no link: the run came from elsewhere)."""
    known = set()
    for row in rows:
        try:
            registry.task(row.task_id)
            known.add(row.task_id)
        except GroundstateError:
            continue
    return known
