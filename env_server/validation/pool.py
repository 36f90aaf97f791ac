"""Validating many tasks at once: one worker process per core, each with its own registry and scorer.

Tasks are independent (each check plays on fresh sandboxes of its own task), so `tasks validate` spreads
them over processes; CI validates every shipped task on both backends, and one process per core halves
that wall time on two cores. Each worker builds its registry and sandbox engine itself, after the fork:
a database connection pool must never cross a fork.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from env_server.domain.registry import DomainRegistry
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.validation import TaskValidation, validate_task


@dataclass(frozen=True)
class Source:
    """Where the tasks come from and where their sandboxes live: what a worker needs to rebuild them."""

    tasks_dirs: tuple[Path, ...]
    domain: str | None
    sandbox_url: str

    def registry(self) -> DomainRegistry:
        """The registry these tasks are served from."""
        return DomainRegistry.discover(list(self.tasks_dirs), only=[self.domain] if self.domain else None)


_STATE: dict[str, tuple[DomainRegistry, Scorer]] = {}


def _start(source: Source) -> None:
    """A worker's initialiser: its own registry and scorer (built once, used for every task it gets)."""
    _STATE["worker"] = (source.registry(), Scorer(make_sandbox_engine(source.sandbox_url)))


def _validate(task_id: str) -> TaskValidation:
    registry, scorer = _STATE["worker"]
    task = registry.task(task_id)
    return validate_task(task, registry.domain(task.domain), scorer)


def validate_tasks(
    source: Source, task_ids: Sequence[str], workers: int, done: Callable[[], None] = lambda: None
) -> list[TaskValidation]:
    """Validate `task_ids` (in that order in the result) on `workers` processes; `done` ticks per task."""
    if workers <= 1 or len(task_ids) <= 1:
        _start(source)
        try:
            reports = []
            for task_id in task_ids:
                reports.append(_validate(task_id))
                done()
            return reports
        finally:
            _STATE.pop("worker")[1].sandboxes.close()
    found: dict[str, TaskValidation] = {}
    with ProcessPoolExecutor(min(workers, len(task_ids)), initializer=_start, initargs=(source,)) as pool:
        futures = {pool.submit(_validate, task_id): task_id for task_id in task_ids}
        for future in as_completed(futures):
            found[futures[future]] = future.result()
            done()
    return [found[task_id] for task_id in task_ids]
