"""Scenario families: parameterised task builders a domain declares, so training tasks never run out.

A family is a function `build(ctx) -> Task`. The context hands it a seeded RNG, fresh entity IDs that
neither the seed nor any benchmark task uses, and the seed rows that no benchmark task touches, so every
generated task lives on entities of its own.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, ClassVar, Self, TypeVar

from env_server.domain._factories import patch_rows
from env_server.domain._ids import FIRST_GENERATED_ID
from shared.tasks import Task, TaskKind

M = TypeVar("M")

#: What an entity ID looks like in every domain: a short upper-case prefix, a dash, digits (BK-10417).
ID_PATTERN = re.compile(r"[A-Z][A-Z0-9]{0,5}-[0-9][0-9A-Z-]*")
#: Generated entities take numbers from this range: above seeds, below IDs that tools generate (90001+).
FRESH_RANGE = (70000, 89999)


class ScenarioUnavailable(Exception):
    """A family cannot build a task from this draw (e.g. no eligible seed row); the draw is discarded."""


@dataclass(frozen=True)
class ScenarioFamily:
    """A parameterised scenario.

    Attributes:
        name: kebab-case, part of generated task ids ("cancel-refund-by-tier").
        covers: the policy rules it exercises ("R3", "R4"), for coverage reports.
        build: makes one task from a context; raises `ScenarioUnavailable` to skip a draw.
        kind: "action" or "analytics".
    """

    name: str
    covers: tuple[str, ...]
    build: Callable[[ScenarioContext], Task]
    kind: TaskKind = "action"


def entity_ids(value: Any) -> Iterator[str]:
    """Every ID-shaped string inside a (nested) value, including IDs mentioned in free text."""
    if isinstance(value, str):
        yield from ID_PATTERN.findall(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from entity_ids(k)
            yield from entity_ids(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from entity_ids(v)


@dataclass
class ScenarioContext:
    """What a family's `build` receives for one draw."""

    domain_name: str
    family: str
    index: int
    rng: random.Random
    now: datetime
    #: Every ID a benchmark (test) task mentions: generated tasks must not use any of them.
    benchmark_ids: frozenset[str]
    #: Every primary-key value of the seed (fresh IDs must not collide with them).
    seed_ids: frozenset[str]
    #: The seed's rows per table, normalised (dates as ISO strings).
    seed_tables: dict[str, list[dict[str, Any]]]
    _issued: set[str] = field(default_factory=set)

    @property
    def task_id(self) -> str:
        """The generated task's id."""
        return f"{self.domain_name}-gen-{self.family}-{self.index:06d}"

    def new_id(self, prefix: str, width: int = 5) -> str:
        """A fresh ID `PREFIX-N` used by neither the seed nor any benchmark task."""
        for _ in range(1000):
            candidate = f"{prefix}-{self.rng.randint(*FRESH_RANGE):0{width}d}"
            if (
                candidate not in self.seed_ids
                and candidate not in self.benchmark_ids
                and candidate not in self._issued
            ):
                self._issued.add(candidate)
                return candidate
        raise ScenarioUnavailable(f"no fresh {prefix} id left")

    def rows(
        self, table: str, where: Callable[[dict[str, Any]], bool] = lambda _: True
    ) -> list[dict[str, Any]]:
        """Seed rows of `table` that match `where` and mention no benchmark entity."""
        return [
            r
            for r in self.seed_tables[table]
            if where(r) and not any(i in self.benchmark_ids for i in entity_ids(list(r.values())))
        ]

    def entities(self, model: type[M], where: Callable[[M], bool] = lambda _: True) -> list[M]:
        """Seed rows of `model`'s table as ORM objects (dates parsed back), those that match `where`.

        Like `rows`, without benchmark entities; for a domain whose models are mapped dataclasses, so a
        family reads seed rows by typed attribute as it reads the ones it builds.
        """
        table = model.__table__  # type: ignore[attr-defined]
        objects = (model(**_python_values(table, r)) for r in self.rows(table.name))
        return [obj for obj in objects if where(obj)]

    def pick(self, table: str, where: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any]:
        """One such row at random, or `ScenarioUnavailable`."""
        candidates = self.rows(table, where)
        if not candidates:
            raise ScenarioUnavailable(f"no eligible row in {table}")
        return self.rng.choice(candidates)

    def task(self, **fields: Any) -> Task:
        """A train task of this domain with this draw's id; `fields` are the other `Task` fields."""
        return Task.model_validate(
            {"id": self.task_id, "domain": self.domain_name, "split": "train", **fields}
        )


@dataclass
class ScenarioPatch:
    """The rows one generated task adds on top of the seed, table by table: its `initial_patch`.

    A domain's families subclass it with builders of fresh rows (a customer, an order and its lines...).
    Tables come out in the order they were first added, or in the subclass's `table_order`, where a table
    it does not name comes last and is never dropped. The order is only how the task file lists them: a
    sandbox loads a patch in foreign-key order whatever the order of its tables.
    """

    ctx: ScenarioContext
    patch: defaultdict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    #: The order of the tables in `initial_patch()`; empty keeps the order in which they were added.
    table_order: ClassVar[Sequence[str]] = ()

    @property
    def rng(self) -> random.Random:
        """The draw's RNG."""
        return self.ctx.rng

    def add(
        self, *patches: Mapping[str, Iterable[dict[str, Any]]], **tables: Iterable[dict[str, Any]]
    ) -> Self:
        """Append rows table by table: those of each patch in turn, then those given by table name.

        A table given no rows is left out, as if it had not been named.
        """
        for rows_by_table in (*patches, tables):
            for table, rows in rows_by_table.items():
                if listed := list(rows):
                    self.patch[table].extend(listed)
        return self

    def put(self, *objects: object) -> Self:
        """Append ORM objects (of mapped dataclasses) as rows of their tables, in the order given."""
        for table, rows in patch_rows(*objects).items():
            self.patch[table].extend(rows)
        return self

    def initial_patch(self) -> dict[str, list[dict[str, Any]]]:
        """The patch, as a plain dict (in `table_order` when the subclass sets one)."""
        if not self.table_order:
            return dict(self.patch)
        rank = {table: i for i, table in enumerate(self.table_order)}
        ordered = sorted(self.patch, key=lambda table: rank.get(table, len(rank)))
        return {table: self.patch[table] for table in ordered}


def _python_values(table: Any, row: dict[str, Any]) -> dict[str, Any]:
    """A normalised seed row's values as the ORM takes them: ISO strings back to dates and instants."""
    values = dict(row)
    for column in table.columns:
        value = values.get(column.key)
        if isinstance(value, str) and column.type.python_type in (date, datetime):
            values[column.key] = column.type.python_type.fromisoformat(value)
    return values


def benchmark_entity_ids(tasks: Iterable[Task]) -> frozenset[str]:
    """Every entity ID the given (test) tasks mention, except IDs tools generate in any sandbox (90001+)."""
    return frozenset(
        i
        for t in tasks
        if t.split == "test"
        for i in entity_ids(t.model_dump(mode="json"))
        if not _is_generated(i)
    )


def _is_generated(entity_id: str) -> bool:
    number = entity_id.rsplit("-", 1)[-1]
    return number.isdigit() and int(number) >= FIRST_GENERATED_ID
