"""`/ui/curricula`: the adaptive curriculum of training runs found under `GROUNDSTATE_RUNS_DIRS`.

A GRPO run with `--curriculum adaptive` decides every step which tasks to play; its `curriculum.jsonl`
says what it decided and why (band, retirements, admitted and minted tasks, posteriors), but nobody reads
hundreds of JSON lines. These pages chart them over steps and list the tasks with their posteriors.
"""

from __future__ import annotations

from fastapi import Request, Response

from env_server.api.deps import RegistryDep, SettingsDep
from env_server.errors import GroundstateError
from env_server.ui.pages import page_router, render
from env_server.ui.training import (
    TOP_TASKS,
    CurriculumView,
    discover_training_runs,
    find_training_run,
    load_training_run,
)

router = page_router("/ui/curricula")


@router.get("")
def curriculum_list(request: Request, settings: SettingsDep) -> Response:
    """Every training run with a curriculum under the configured directories: its latest step (or why not)."""
    runs: list[tuple[str, CurriculumView | None, str | None]] = []
    for name, path in discover_training_runs(settings.runs_dirs).items():
        try:
            runs.append((name, load_training_run(name, path), None))
        except GroundstateError as exc:
            runs.append((name, None, exc.message))
    return render(request, "curricula.html", runs=runs, dirs=settings.runs_dirs)


@router.get("/{name}")
def curriculum_page(request: Request, name: str, settings: SettingsDep, registry: RegistryDep) -> Response:
    """One training run's curriculum: pool sizes, informative groups and posteriors over steps; its tasks."""
    view = load_training_run(name, find_training_run(settings.runs_dirs, name))
    known = set()
    for row in view.rows:
        try:
            registry.task(row.task_id)
            known.add(row.task_id)
        except GroundstateError:  # a task of another server, or minted for the run and not loaded here
            continue
    return render(request, "curriculum.html", run=view, known_tasks=known, top_tasks=TOP_TASKS)
