"""Starter entities, written once: a member, a book and a loan, for the seed, the families and the tests.

The seed turns them into ORM rows (`.orm()`), the scenario families into `initial_patch` rows (`.row()`).
`loan` draws the due date and the renewals count from the caller's RNG, in that order, as both did before
they shared it, so the seed's rows and the generated tasks are the same as they were.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from env_server.domain import EntitySpec
from env_server.domains.starter.models import Book, Loan, Member

# fmt: off
FIRST_NAMES = [
    "Ada", "Bram", "Chen", "Dina", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Mo", "Nia",
]
LAST_NAMES = [
    "Berg", "Costa", "Diaz", "Okafor", "Ito", "Kowal", "Lund", "Moreau", "Novak", "Park", "Rossi", "Sato",
]
TITLE_WORDS = [
    "River", "Glass", "Winter", "Salt", "Copper", "Garden", "Night", "Paper", "Stone", "Harbor", "Fox",
]
# fmt: on
#: A loan's due date lies this many days around today: from overdue (negative) to due in three weeks.
DUE_IN_DAYS = (-10, 21)


@dataclass
class MemberSpec(EntitySpec[Member], model=Member):
    """A library card holder."""

    member_id: str
    name: str


@dataclass
class BookSpec(EntitySpec[Book], model=Book):
    """One copy on the shelves."""

    book_id: str
    title: str


@dataclass
class LoanSpec(EntitySpec[Loan], model=Loan):
    """A book lent to a member."""

    loan_id: str
    member_id: str
    book_id: str
    due_date: date
    status: str
    renewals: int


def member(rng: random.Random, member_id: str) -> MemberSpec:
    """A member with a drawn first and last name."""
    return MemberSpec(member_id, f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}")


def book(rng: random.Random, book_id: str) -> BookSpec:
    """A copy with a drawn two-word title ("The Salt Harbor")."""
    return BookSpec(book_id, f"The {rng.choice(TITLE_WORDS)} {rng.choice(TITLE_WORDS)}")


def loan(
    rng: random.Random, loan_id: str, member_id: str, book_id: str, today: date, status: str = "active"
) -> LoanSpec:
    """A loan due within `DUE_IN_DAYS` of `today`, renewed 0 to 2 times (drawn in that order)."""
    due = today + timedelta(days=rng.randrange(*DUE_IN_DAYS))
    return LoanSpec(loan_id, member_id, book_id, due, status, renewals=rng.randrange(0, 3))
