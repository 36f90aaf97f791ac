"""The entity and task-shape kit of the domain API: one spec gives the seed's object and the family's row;
the shape builders put a conversation, a refusal and an analytics question in the order validation reads."""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import date, datetime
from typing import Any

import pytest
from sqlalchemy import ForeignKey, Integer, String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from env_server.domain import (
    THANKS,
    EntitySpec,
    ScenarioContext,
    analytics_task,
    call,
    conversation,
    insert,
    named_metadata,
    patch_rows,
    patch_value,
    refusal,
    reply,
)
from env_server.domain.registry import DomainRegistry


class _Base(DeclarativeBase):
    metadata = named_metadata()


class _Shelf(_Base):
    __tablename__ = "shelves"
    shelf_id: Mapped[str] = mapped_column(String(8), primary_key=True)


class _Book(_Base):
    __tablename__ = "books"
    book_id: Mapped[str] = mapped_column(String(8), primary_key=True)
    shelf_id: Mapped[str] = mapped_column(ForeignKey("shelves.shelf_id"))
    added_on: Mapped[date]
    checked_at: Mapped[datetime | None]
    note: Mapped[str | None] = mapped_column(String(40))
    copies: Mapped[int] = mapped_column(Integer, default=1)


@dataclass
class ShelfSpec(EntitySpec[_Shelf], model=_Shelf):
    shelf_id: str


@dataclass
class BookSpec(EntitySpec[_Book], model=_Book):
    book_id: str
    shelf_id: str
    added_on: date
    checked_at: datetime | None
    note: str | None = None
    copies: int = 1
    tags: list[str] = field(default_factory=list)


@pytest.fixture
def session() -> Iterator[Session]:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    with Session(engine) as s:
        yield s
    engine.dispose()


def _book(**changes: object) -> BookSpec:
    values: dict[str, object] = {
        "book_id": "B-70001",
        "shelf_id": "S-1",
        "added_on": date(2026, 3, 4),
        "checked_at": datetime(2026, 3, 5, 9, 30),
    }
    return BookSpec(**{**values, **changes})  # type: ignore[arg-type]


def test_a_row_holds_iso_dates_and_only_the_fields_the_spec_sets_in_field_order() -> None:
    assert _book().row() == {
        "book_id": "B-70001",
        "shelf_id": "S-1",
        "added_on": "2026-03-04",
        "checked_at": "2026-03-05T09:30:00",
    }
    assert list(_book(copies=3, note="signed").row()) == [
        "book_id",
        "shelf_id",
        "added_on",
        "checked_at",
        "note",
        "copies",
    ]


def test_a_required_field_stays_in_the_row_even_when_empty() -> None:
    """A field without a default is the scenario's statement (`checked_at: None`), so the row keeps it."""
    assert _book(checked_at=None).row()["checked_at"] is None


def test_patch_value_matches_the_snapshot_form_of_instants_and_dates() -> None:
    assert patch_value(datetime(2026, 1, 2, 3, 4, 5, 678)) == "2026-01-02T03:04:05"
    assert patch_value(date(2026, 1, 2)) == "2026-01-02"
    assert patch_value(7) == 7


def test_the_orm_object_and_the_patch_row_describe_the_same_row(session: Session) -> None:
    shelf, book = ShelfSpec("S-1"), _book(note="signed")
    objects = insert(session, [shelf, book])
    assert [type(o) for o in objects] == [_Shelf, _Book]
    stored = session.scalars(select(_Book)).one()
    assert stored.added_on == date(2026, 3, 4)
    assert stored.copies == 1  # left to the column default, as the patch row leaves it out
    assert {k: patch_value(getattr(stored, k)) for k in book.row()} == book.row()


def test_patch_rows_group_specs_by_table_in_order() -> None:
    rows = patch_rows(ShelfSpec("S-1"), _book(), _book(book_id="B-70002"))
    assert list(rows) == ["shelves", "books"]
    assert [r["book_id"] for r in rows["books"]] == ["B-70001", "B-70002"]
    assert BookSpec.table() == "books"


def test_conversation_orders_request_identity_yes_then_thanks() -> None:
    assert conversation("Cancel BK-1.", identity="Ito, born 2 May 1980.", yes="Yes, go ahead.") == [
        "Cancel BK-1.",
        "Ito, born 2 May 1980.",
        "Yes, go ahead.",
        THANKS,
    ]
    assert conversation("Renew L-1.", then=["And L-2 too."], thanks="Bye.") == [
        "Renew L-1.",
        "And L-2 too.",
        "Bye.",
    ]


def test_a_refusal_reads_says_the_decisive_fact_and_names_the_wrong_write() -> None:
    said = reply("It is non-refundable.", "Non-refundable bookings cannot change.")
    look = call("get_booking", booking_id="BK-70001")
    wrong = [call("verify"), call("change_booking", booking_id="BK-70001")]
    fields = refusal("non-refundable", said, reads=[look], wrong=wrong)
    assert fields == {
        "gold_actions": [look],
        "wrong_actions": wrong,
        "communicate": ["non-refundable"],
        "reference_reply": said,
    }
    with pytest.raises(ValueError, match="decisive"):
        refusal([], said, reads=[look], wrong=wrong)
    with pytest.raises(ValueError, match="wrong"):
        refusal("non-refundable", said, reads=[look], wrong=[])


def test_an_analytics_task_asks_its_description_and_states_a_tolerance_only_when_given() -> None:
    ctx = ScenarioContext(
        domain_name="library",
        family="questions",
        index=3,
        rng=random.Random(0),
        now=datetime(2026, 1, 1),
        benchmark_ids=frozenset(),
        seed_ids=frozenset(),
        seed_tables={},
    )
    task = analytics_task(
        ctx, persona="Ana, analyst", description="How many shelves?", sql="SELECT COUNT(*) FROM shelves"
    )
    assert (task.id, task.kind, task.split) == ("library-gen-questions-000003", "analytics", "train")
    assert task.difficulty_tags == ["analytics"]
    assert task.user.script == ["How many shelves?"] and task.user.goal == "How many shelves?"
    assert task.analytics is not None and task.analytics.tolerance == 0.0
    ratio = analytics_task(
        ctx,
        persona="Ana, analyst",
        description="Average books per shelf.",
        goal="Know the average",
        script=["What is the average number of books per shelf?", "Two decimals is fine."],
        sql="SELECT AVG(books) FROM shelves",
        tags=["average"],
        tolerance=0.01,
    )
    assert ratio.analytics is not None and ratio.analytics.tolerance == 0.01
    assert ratio.user.goal == "Know the average" and len(ratio.user.script) == 2
    assert ratio.difficulty_tags == ["analytics", "average"]


class _Car(_Base):
    __tablename__ = "cars"
    car_id: Mapped[str] = mapped_column(String(8), primary_key=True)
    model: Mapped[str] = mapped_column(String(20))


@dataclass
class CarSpec(EntitySpec[_Car], model=_Car):
    car_id: str
    model: str


def test_a_column_called_model_does_not_hide_the_orm_class(session: Session) -> None:
    spec = CarSpec("C-1", "Accord")
    assert spec.row() == {"car_id": "C-1", "model": "Accord"}
    assert CarSpec.table() == "cars"
    insert(session, [spec])
    assert session.scalars(select(_Car.model)).one() == "Accord"


def _specs_of_the_built_in_domains() -> list[type[EntitySpec[Any]]]:
    """Every entity spec a built-in domain's `factories.py` declares."""

    specs = []
    for domain in DomainRegistry.discover().domains:
        module = importlib.import_module(f"env_server.domains.{domain.name}.factories")
        specs += [
            obj
            for _, obj in inspect.getmembers(module, inspect.isclass)
            if issubclass(obj, EntitySpec) and obj is not EntitySpec and obj.__module__ == module.__name__
        ]
    return specs


@pytest.mark.parametrize("spec", _specs_of_the_built_in_domains(), ids=lambda s: s.__qualname__)
def test_every_domains_spec_names_its_tables_columns_and_every_required_one(spec: type[Any]) -> None:
    """A spec is its table's row: a field that is no column, or a required column it lacks, is drift."""
    table = spec.orm_class.__table__
    named = {f.name for f in dataclass_fields(spec)}
    columns = set(table.columns.keys())
    assert named <= columns, f"{spec.__name__} fields that are no column: {named - columns}"
    required = {
        c.name
        for c in table.columns
        if not c.nullable and c.default is None and c.server_default is None and c.autoincrement is not True
    }
    assert required <= named, f"{spec.__name__} lacks the required columns {required - named}"
