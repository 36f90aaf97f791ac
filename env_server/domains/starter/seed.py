"""Starter seed: 300 members, 500 books and 1,200 loans (L-1000 .. L-2199), drawn from the given RNG."""

from __future__ import annotations

import random
from datetime import timedelta

from sqlalchemy.orm import Session

from env_server.domains.starter.models import NOW, Book, Loan, Member

_FIRST = ["Ada", "Bram", "Chen", "Dina", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Mo", "Nia"]
_LAST = [
    "Berg",
    "Costa",
    "Diaz",
    "Okafor",
    "Ito",
    "Kowal",
    "Lund",
    "Moreau",
    "Novak",
    "Park",
    "Rossi",
    "Sato",
]
_WORDS = ["River", "Glass", "Winter", "Salt", "Copper", "Garden", "Night", "Paper", "Stone", "Harbor", "Fox"]


def seed(session: Session, rng: random.Random) -> None:
    """Members M-0001.., books B-0001.., loans L-1000..L-2199: every fourth returned, the rest due soon.

    L-1998 (active) is the domain's canary: no task touches it.
    """
    members = [
        Member(member_id=f"M-{i:04d}", name=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}")
        for i in range(1, 301)
    ]
    books = [
        Book(book_id=f"B-{i:04d}", title=f"The {rng.choice(_WORDS)} {rng.choice(_WORDS)}")
        for i in range(1, 501)
    ]
    session.add_all([*members, *books])
    session.flush()
    today = NOW.date()
    session.add_all(
        Loan(
            loan_id=f"L-{1000 + i}",
            member_id=rng.choice(members).member_id,
            book_id=rng.choice(books).book_id,
            due_date=today + timedelta(days=rng.randrange(-10, 21)),
            status="returned" if i % 4 == 3 else "active",
            renewals=rng.randrange(0, 3),
        )
        for i in range(1200)
    )
