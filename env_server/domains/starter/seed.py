"""Starter seed: 300 members, 500 books and 1,200 loans (L-1000 .. L-2199), drawn from the given RNG."""

from __future__ import annotations

import random

from sqlalchemy.orm import Session

from env_server.domains.starter.factories import book, loan, member
from env_server.domains.starter.models import NOW


def seed(session: Session, rng: random.Random) -> None:
    """Members M-0001.., books B-0001.., loans L-1000..L-2199: every fourth returned, the rest due soon.

    L-1998 (active) is the domain's canary: no task touches it.
    """
    members = [member(rng, f"M-{i:04d}") for i in range(1, 301)]
    books = [book(rng, f"B-{i:04d}") for i in range(1, 501)]
    session.add_all([*(m.orm() for m in members), *(b.orm() for b in books)])
    session.flush()
    today = NOW.date()
    session.add_all(
        loan(
            rng,
            f"L-{1000 + i}",
            rng.choice(members).member_id,
            rng.choice(books).book_id,
            today,
            status="returned" if i % 4 == 3 else "active",
        ).orm()
        for i in range(1200)
    )
