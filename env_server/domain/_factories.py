"""Entity specs: one typed description of a row, shared by a domain's seed, scenario families and tool tests.

A domain builds the same entities in three places: the seed adds ORM objects, a scenario family writes
`initial_patch` rows (plain dicts, dates as ISO strings), and the tool tests add more ORM objects. Written
three times, the three drift apart (a column renamed in one, a derived label computed differently in
another). A domain's `factories.py` writes each entity once, as an `EntitySpec` dataclass and a function
that builds it (deriving what follows from the inputs: a card's label from its brand and digits, a booking's
payment from its total); `orm()` and `row()` then give the seed's object and the family's row.

A domain whose models are mapped dataclasses (see `_tables`) needs no specs: the ORM class is the spec, its
factories return ORM objects, and `row_of` gives an object's patch row by the same rule (a column without a
default always, one with a default only when its value differs). `patch_rows` and `insert` take either.

A factory never draws from an RNG on its own unless its caller passes one: the seed and the families keep
their draws in the order that makes their rows, so moving them onto factories changes no seeded row and no
generated task.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, Field, fields, is_dataclass
from datetime import date, datetime, time
from typing import Any, ClassVar, Generic, TypeVar, cast

from sqlalchemy.orm import Session

M = TypeVar("M")


def patch_value(value: Any) -> Any:
    """One column value as an `initial_patch` row holds it: instants and dates as ISO strings.

    The same form a sandbox snapshot gives (an instant to the second, without a time zone), so a family's
    row and the seed row it copies compare equal.
    """
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat(timespec="seconds")
    if isinstance(value, date | time):
        return value.isoformat()
    return value


class EntitySpec(Generic[M]):
    """The base of a domain's entity specs: a dataclass whose fields are the columns of one table's row.

    Declare one per entity, naming its ORM class:

        @dataclass
        class LoanSpec(EntitySpec[Loan], model=Loan):
            loan_id: str
            due_date: date
            renewals: int = 0

    A field without a default is always part of the row; a field with a default is part of it only when its
    value differs (give it the column's own default), so a patch row names what the scenario sets and the
    database fills the rest, as it does for the seed's objects. Fields are listed in the row in declaration
    order: task files show columns in that order.
    """

    #: The ORM class of the spec's table (named so that no column, not even one called `model`, hides it).
    orm_class: ClassVar[type[Any]]

    def __init_subclass__(cls, model: type[Any] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if model is not None:
            cls.orm_class = model

    @classmethod
    def table(cls) -> str:
        """The name of the spec's table (its `initial_patch` key)."""
        return str(cls.orm_class.__tablename__)

    def values(self) -> dict[str, Any]:
        """The column values the spec sets, as Python values (dates as `date`), in field order."""
        out: dict[str, Any] = {}
        for f in fields(cast(Any, self)):
            value = getattr(self, f.name)
            if (f.default is MISSING and f.default_factory is MISSING) or value != _default(f):
                out[f.name] = value
        return out

    def orm(self) -> M:
        """The row as an ORM object of the spec's table, for the seed and the tool tests."""
        return cast(M, self.orm_class(**self.values()))

    def row(self) -> dict[str, Any]:
        """The row as an `initial_patch` entry: the same values, dates and instants as ISO strings."""
        return {name: patch_value(value) for name, value in self.values().items()}


def _default(f: Any) -> Any:
    return f.default_factory() if f.default is MISSING else f.default


def values_of(obj: object) -> dict[str, Any]:
    """The column values an ORM object of a mapped dataclass sets, in the table's column order.

    A column whose dataclass field has no default is always named; one with a default only when the
    object's value differs from the column's default (as `EntitySpec.values` does for its fields).
    """
    cls: Any = type(obj)
    if not is_dataclass(cls) or not hasattr(cls, "__table__"):
        raise TypeError(
            f"{type(obj).__name__} is not a mapped dataclass (declare it on a MappedAsDataclass base)"
        )
    declared = {f.name: f for f in fields(cls)}
    out: dict[str, Any] = {}
    for column in cls.__table__.columns:
        value = getattr(obj, column.key)
        f = declared[column.key]
        if _required(f) or value != (column.default.arg if column.default is not None else None):
            out[column.key] = value
    return out


def _required(f: Field[Any]) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def row_of(obj: object) -> dict[str, Any]:
    """An ORM object's row as an `initial_patch` entry: `values_of`, dates and instants as ISO strings."""
    return {name: patch_value(value) for name, value in values_of(obj).items()}


def patch_rows(*entities: object) -> dict[str, list[dict[str, Any]]]:
    """Rows of an `initial_patch`, table by table, in the order the entities come (for `ScenarioPatch.add`).

    Each entity is an `EntitySpec` or an ORM object of a mapped dataclass.
    """
    rows: dict[str, list[dict[str, Any]]] = {}
    for entity in entities:
        if isinstance(entity, EntitySpec):
            rows.setdefault(entity.table(), []).append(entity.row())
        else:
            rows.setdefault(type(entity).__tablename__, []).append(row_of(entity))  # type: ignore[attr-defined]
    return rows


def insert(session: Session, entities: Iterable[object]) -> list[Any]:
    """Add ORM objects (or the objects of `EntitySpec`s) to `session` in the given order, parents first.

    A tool test's setup. Each object is flushed as it is added: tables without ORM relationships give the
    session no order to insert them in, so the order of `entities` is what satisfies their foreign keys.
    Returns the objects.
    """
    objects = []
    for entity in entities:
        obj = entity.orm() if isinstance(entity, EntitySpec) else entity
        session.add(obj)
        session.flush()
        objects.append(obj)
    return objects
