"""Find installed domains: built-ins and third-party packages, all through the `groundstate.domains` group."""

from __future__ import annotations

import copy
import heapq
from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

from env_server.domain._domain import Domain, load_task_text
from env_server.errors import TaskInvalidError, UnknownDomainError, UnknownTaskError
from shared.tasks import Task

ENTRY_POINT_GROUP = "groundstate.domains"


class TaskSource(Protocol):
    """Tasks that arrive while the server runs (minted for a training run): asked for ids the files lack."""

    def get(self, task_id: str) -> Task | None:
        """The task with this id, or None."""
        ...

    def tasks(self, domain: str | None = None) -> Iterator[Task]:
        """Every task of the source (of `domain`), in id order."""
        ...


class DomainRegistry:
    """The domains and tasks this server serves, indexed for constant-time lookup."""

    def __init__(self, domains: Iterable[Domain], extra_tasks: Iterable[Task] = ()) -> None:
        self._domains: dict[str, Domain] = {}
        for domain in domains:
            if domain.name in self._domains:
                raise ValueError(f"two domains are named '{domain.name}'")
            self._domains[domain.name] = domain
        self._tasks: dict[str, Task] = {}
        self._sources: list[TaskSource] = []
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

    def with_source(self, source: TaskSource) -> DomainRegistry:
        """This registry, also serving the tasks of `source` (a file's task wins an id both hold).

        A new view rather than a change to this one: several servers (tests, replicas in one process) may
        share one registry, each with its own store.
        """
        view = copy.copy(self)
        view._sources = [*self._sources, source]
        return view

    def task(self, task_id: str) -> Task:
        """The task with id `task_id`, or `UnknownTaskError`."""
        task = self._tasks.get(task_id)
        for source in self._sources if task is None else ():
            task = source.get(task_id)
            if task is not None and task.domain in self._domains:
                return task
        if task is None:
            raise UnknownTaskError(f"unknown task '{task_id}'", field="task_id")
        return task

    def static_tasks(self, domain: str | None = None) -> Iterator[Task]:
        """The tasks of the domains and task files only (what `tasks validate` checks), in id order."""
        for task_id in sorted(self._tasks):
            if domain is None or self._tasks[task_id].domain == domain:
                yield self._tasks[task_id]

    def tasks(self, domain: str | None = None, split: str | None = None) -> Iterator[Task]:
        """Tasks in id order (minted ones included), optionally filtered by domain and split."""
        if domain is not None:
            self.domain(domain)
        streams = [self.static_tasks(domain), *(s.tasks(domain) for s in self._sources)]
        for task in heapq.merge(*streams, key=lambda t: t.id):
            if task.domain not in self._domains or (
                task.id in self._tasks and self._tasks[task.id] is not task
            ):
                continue
            if split is None or task.split == split:
                yield task


def load_tasks_dir(directory: Path) -> list[Task]:
    """Every `*.yaml` task in `directory` (e.g. a generated training set)."""
    if not directory.is_dir():
        raise TaskInvalidError(f"tasks directory {directory} does not exist", field="tasks_dir")
    return [
        load_task_text(p.read_text(encoding="utf-8"), source=str(p)) for p in sorted(directory.glob("*.yaml"))
    ]
