"""Models as the spec of their rows: a mapped dataclass gives the seed's object, the family's patch row and
the tool's "not found" refusal, each written once on the model."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from datetime import date, datetime
from typing import ClassVar

import pytest
from sqlalchemy import ForeignKey, Integer, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedAsDataclass, Session, mapped_column, relationship

from env_server.domain import (
    Entity,
    ScenarioContext,
    ScenarioPatch,
    ToolError,
    insert,
    named_metadata,
    patch_rows,
    row_of,
    values_of,
)
from env_server.domains.hotel import models as hotel_models


class _Base(MappedAsDataclass, DeclarativeBase, kw_only=True, eq=False):
    metadata = named_metadata()


class _Shelf(Entity, _Base):
    __tablename__ = "shelves"
    not_found: ClassVar[str] = "Shelf {key} not found"
    shelf_id: Mapped[str] = mapped_column(String(8), primary_key=True)
    books: Mapped[list[_Book]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="_Book.book_id"
    )


class _Book(Entity, _Base):
    __tablename__ = "books"
    book_id: Mapped[str] = mapped_column(String(8), primary_key=True)
    shelf_id: Mapped[str] = mapped_column(ForeignKey("shelves.shelf_id"))
    added_on: Mapped[date]
    checked_at: Mapped[datetime | None]
    note: Mapped[str | None] = mapped_column(String(40), default=None, kw_only=True)
    copies: Mapped[int] = mapped_column(Integer, default=1, kw_only=True)


@pytest.fixture
def session() -> Iterator[Session]:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    with Session(engine) as s:
        yield s
    engine.dispose()


def _book(**changes: object) -> _Book:
    values: dict[str, object] = {
        "book_id": "B-70001",
        "shelf_id": "S-1",
        "added_on": date(2026, 3, 4),
        "checked_at": datetime(2026, 3, 5, 9, 30),
    }
    return _Book(**{**values, **changes})  # type: ignore[arg-type]


def test_a_models_row_holds_iso_dates_and_only_the_columns_it_sets_in_table_order() -> None:
    assert row_of(_book()) == {
        "book_id": "B-70001",
        "shelf_id": "S-1",
        "added_on": "2026-03-04",
        "checked_at": "2026-03-05T09:30:00",
    }
    assert list(row_of(_book(copies=3, note="signed"))) == [
        "book_id",
        "shelf_id",
        "added_on",
        "checked_at",
        "note",
        "copies",
    ]
    assert values_of(_book())["added_on"] == date(2026, 3, 4)


def test_a_column_without_a_default_stays_in_the_row_even_when_empty() -> None:
    assert row_of(_book(checked_at=None))["checked_at"] is None
    assert "note" not in row_of(_book(note=None))


def test_row_of_refuses_an_object_that_is_no_mapped_dataclass() -> None:
    with pytest.raises(TypeError, match="not a mapped dataclass"):
        row_of(object())


def test_insert_and_patch_rows_take_orm_objects(session: Session) -> None:
    shelf, book = _Shelf(shelf_id="S-1"), _book(note="signed")
    assert insert(session, [shelf, book]) == [shelf, book]
    assert book.copies == 1
    assert [b.book_id for b in shelf.books] == ["B-70001"]  # the view-only relationship reads the table
    rows = patch_rows(shelf, book, _book(book_id="B-70002"))
    assert list(rows) == ["shelves", "books"]
    assert [r["book_id"] for r in rows["books"]] == ["B-70001", "B-70002"]


def test_get_or_refuse_returns_the_row_or_refuses_with_the_models_message(session: Session) -> None:
    insert(session, [_Shelf(shelf_id="S-1"), _book()])
    assert _Shelf.get_or_refuse(session, "S-1").shelf_id == "S-1"
    with pytest.raises(ToolError, match=r"^Shelf S-9 not found$"):
        _Shelf.get_or_refuse(session, "S-9")
    with pytest.raises(ToolError, match=r"^B-70001 not found$"):  # the default message, and `where`
        _Book.get_or_refuse(session, "B-70001", where=lambda b: b.shelf_id == "S-2")


def _context(seed_tables: dict[str, list[dict[str, object]]]) -> ScenarioContext:
    return ScenarioContext(
        domain_name="toy",
        family="f",
        index=0,
        rng=random.Random(0),
        now=datetime(2026, 1, 1),
        benchmark_ids=frozenset({"B-10002"}),
        seed_ids=frozenset(),
        seed_tables=seed_tables,  # type: ignore[arg-type]
    )


def test_seed_rows_come_back_as_objects_with_dates_and_without_benchmark_entities() -> None:
    seeded: dict[str, object] = {
        "book_id": "B-10001",
        "shelf_id": "S-1",
        "added_on": "2026-03-04",
        "checked_at": None,
    }
    ctx = _context({"books": [seeded, {**seeded, "book_id": "B-10002"}]})
    (book,) = ctx.entities(_Book)
    assert book.added_on == date(2026, 3, 4) and book.copies == 1
    assert row_of(book) == seeded
    assert ctx.entities(_Book, lambda b: b.shelf_id == "S-2") == []


def test_a_scenario_patch_puts_objects_under_their_tables() -> None:
    patch = ScenarioPatch(_context({})).put(_Shelf(shelf_id="S-1"), _book()).put(_book(book_id="B-70002"))
    assert patch.initial_patch() == {
        "shelves": [{"shelf_id": "S-1"}],
        "books": [row_of(_book()), row_of(_book(book_id="B-70002"))],
    }


@pytest.mark.parametrize(
    "model",  # sorted: the registry is a set, and xdist workers must collect the same order
    sorted(hotel_models.Base.registry.mappers, key=lambda m: m.class_.__name__),
    ids=lambda m: m.class_.__name__,
)
def test_every_hotel_model_is_its_rows_spec(model: object) -> None:
    """Each hotel column is a keyword of its model's constructor; nothing else is (not a relationship)."""
    cls = model.class_  # type: ignore[attr-defined]
    init = {f.name for f in dataclasses.fields(cls) if f.init}
    assert init == set(cls.__table__.columns.keys())
