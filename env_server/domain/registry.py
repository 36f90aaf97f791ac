"""Find installed domains: built-ins and third-party packages, all through the `groundstate.domains` group."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points
from pathlib import Path

from env_server.domain._domain import Domain, load_task_text
from env_server.errors import TaskInvalidError, UnknownDomainError, UnknownTaskError
from shared.tasks import Task

ENTRY_POINT_GROUP = "groundstate.domains"


class DomainRegistry:
    """The domains and tasks this server serves, indexed for constant-time lookup."""

    def __init__(self, domains: Iterable[Domain], extra_tasks: Iterable[Task] = ()) -> None:
        self._domains: dict[str, Domain] = {}
        for domain in domains:
            if domain.name in self._domains:
                raise ValueError(f"two domains are named '{domain.name}'")
            self._domains[domain.name] = domain
        self._tasks: dict[str, Task] = {}
        for task in [t for d in self._domains.values() for t in d.tasks] + list(extra_tasks):
            self._add_task(task)

    def _add_task(self, task: Task) -> None:
        if task.domain not in self._domains:
            raise TaskInvalidError(f"task {task.id}: unknown domain '{task.domain}'", field="domain")
        if task.id in self._tasks:
            raise TaskInvalidError(f"task id '{task.id}' is defined twice", field="id")
        self._tasks[task.id] = task

    @classmethod
    def discover(cls, tasks_dirs: Iterable[Path] = (), only: Iterable[str] | None = None) -> DomainRegistry:
        """Load every domain registered under the entry-point group, plus task files from `tasks_dirs`.

        Raises:
            UnknownDomainError: `only` names a domain that no installed package provides.
        """
        wanted = set(only) if only else None
        points = list(entry_points(group=ENTRY_POINT_GROUP))
        missing = sorted(wanted - {ep.name for ep in points}) if wanted else []
        if missing:
            known = ", ".join(sorted(ep.name for ep in points)) or "none"
            raise UnknownDomainError(f"unknown domain '{missing[0]}' (known: {known})", field="domain")
        domains = [ep.load() for ep in points if wanted is None or ep.name in wanted]
        for d in domains:
            if not isinstance(d, Domain):
                raise TypeError(f"entry point of group {ENTRY_POINT_GROUP} gave {type(d)!r}, not a Domain")
        extra = [t for directory in tasks_dirs for t in load_tasks_dir(directory)]
        return cls(domains, extra_tasks=[t for t in extra if wanted is None or t.domain in wanted])

    @property
    def domains(self) -> list[Domain]:
        """All domains, by name."""
        return sorted(self._domains.values(), key=lambda d: d.name)

    def domain(self, name: str) -> Domain:
        """The domain called `name`, or `UnknownDomainError` listing the known ones."""
        try:
            return self._domains[name]
        except KeyError:
            known = ", ".join(sorted(self._domains)) or "none"
            raise UnknownDomainError(f"unknown domain '{name}' (known: {known})", field="domain") from None

    def task(self, task_id: str) -> Task:
        """The task with id `task_id`, or `UnknownTaskError`."""
        try:
            return self._tasks[task_id]
        except KeyError:
            raise UnknownTaskError(f"unknown task '{task_id}'", field="task_id") from None

    def tasks(self, domain: str | None = None, split: str | None = None) -> Iterator[Task]:
        """Tasks in id order, optionally filtered by domain and split."""
        if domain is not None:
            self.domain(domain)
        for task_id in sorted(self._tasks):
            task = self._tasks[task_id]
            if (domain is None or task.domain == domain) and (split is None or task.split == split):
                yield task


def load_tasks_dir(directory: Path) -> list[Task]:
    """Every `*.yaml` task in `directory` (e.g. a generated training set)."""
    if not directory.is_dir():
        raise TaskInvalidError(f"tasks directory {directory} does not exist", field="tasks_dir")
    return [
        load_task_text(p.read_text(encoding="utf-8"), source=str(p)) for p in sorted(directory.glob("*.yaml"))
    ]
