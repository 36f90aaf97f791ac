"""Starter domain tables: a lending library's members, books and loans.

Three small tables keep the system prompt short enough for a 135M-parameter model on a CPU; the one
business fact that matters to a task lives in `loans` (its status and due date).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import CheckConstraint, Date, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import named_metadata, one_of

#: The domain's frozen clock: Monday 2 November 2026, 10:00 at the lending desk.
NOW = datetime(2026, 11, 2, 10, 0)

LoanStatus = Literal["active", "returned"]
RENEWAL_DAYS = 14
"""A renewal moves the due date this many days later (policy rule 2)."""


class Base(DeclarativeBase):
    """Declarative base on the starter domain's own MetaData."""

    metadata = named_metadata()


class Member(Base):
    """A library card holder."""

    __tablename__ = "members"

    member_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "M-0042"')
    name: Mapped[str] = mapped_column(String(60), comment="The member's full name.")


class Book(Base):
    """One physical copy of a book on the shelves."""

    __tablename__ = "books"

    book_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "B-0107"')
    title: Mapped[str] = mapped_column(String(80), comment="The title printed on the copy.")


class Loan(Base):
    """A book lent to a member: active until it is returned; each renewal moves the due date."""

    __tablename__ = "loans"
    __table_args__ = (
        one_of("status", LoanStatus),
        CheckConstraint("renewals >= 0", name="renewals_not_negative"),
    )

    loan_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "L-2417"')
    member_id: Mapped[str] = mapped_column(ForeignKey("members.member_id"), comment="The borrower.")
    book_id: Mapped[str] = mapped_column(ForeignKey("books.book_id"), comment="The copy lent.")
    due_date: Mapped[date] = mapped_column(Date, comment="When the copy must be back.")
    status: Mapped[str] = mapped_column(String(10), comment="active or returned.")
    renewals: Mapped[int] = mapped_column(Integer, default=0, comment="Times the loan was renewed.")
