"""Minted tasks in the store: what every worker serves once one worker has generated and validated it.

The registry asks this source for any id it does not hold itself (`DomainRegistry.attach`). A minted task
never changes after it is written, so each process keeps those it has read; listing reads the table again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, func, insert, select
from sqlalchemy.exc import IntegrityError

from env_server.store.models import MintedTaskRecord
from env_server.store.store import Store, utcnow
from shared.tasks import Task

_MINTED = cast(Table, MintedTaskRecord.__table__)


@dataclass(frozen=True)
class MintedTask:
    """A task to store, with the draw that produced it."""

    task: Task
    family: str
    draw_index: int
    seed: int


class MintedTasks:
    """Minted tasks of one store: written once, read by id or listed by domain."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._read: dict[str, Task] = {}
        self._lock = threading.Lock()

    def next_index(self, domain: str, family: str, floor: int) -> int:
        """The first draw index above every stored one of (domain, family), and at least `floor`."""
        query = select(func.max(_MINTED.c.draw_index)).where(
            _MINTED.c.domain == domain, _MINTED.c.family == family
        )
        with self.store.engine.connect() as conn:
            highest = conn.execute(query).scalar_one_or_none()
        return max(floor, (highest or 0) + 1)

    def add(self, minted: Sequence[MintedTask]) -> bool:
        """Store every task in one transaction; False (nothing stored) when one of the ids is taken."""
        rows = [
            {
                "task_id": m.task.id,
                "domain": m.task.domain,
                "family": m.family,
                "draw_index": m.draw_index,
                "seed": m.seed,
                "task": m.task.model_dump(mode="json"),
                "created_at": utcnow(),
            }
            for m in minted
        ]
        if not rows:
            return True
        try:
            with self.store.writing() as conn:
                conn.execute(insert(_MINTED), rows)
        except IntegrityError:  # another worker minted the same index first: the caller draws again
            return False
        return True

    def get(self, task_id: str) -> Task | None:
        """The minted task with this id, or None."""
        with self._lock:
            known = self._read.get(task_id)
        if known is not None:
            return known
        query = select(_MINTED.c.task).where(_MINTED.c.task_id == task_id)
        with self.store.engine.connect() as conn:
            data = conn.execute(query).scalar_one_or_none()
        if data is None:
            return None
        task = Task.model_validate(data)
        with self._lock:
            self._read[task_id] = task
        return task

    def tasks(self, domain: str | None = None) -> Iterator[Task]:
        """Every minted task (of `domain`), in id order."""
        query = select(_MINTED.c.task).order_by(_MINTED.c.task_id)
        if domain is not None:
            query = query.where(_MINTED.c.domain == domain)
        with self.store.engine.connect() as conn:
            rows = conn.execute(query).scalars().all()
        for data in rows:
            yield Task.model_validate(data)
