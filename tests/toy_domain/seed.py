"""Toy bank seed: 100 accounts (scaled by GROUNDSTATE_TOY_SCALE for benchmarks)."""

import os
import random

from sqlalchemy.orm import Session

from tests.toy_domain.models import Account


def seed(session: Session, rng: random.Random) -> None:
    """Accounts AC-0000.. with random balances."""
    n = 100 * int(os.environ.get("GROUNDSTATE_TOY_SCALE", "1"))
    session.add_all(
        Account(id=f"AC-{i:04d}", owner=f"owner {i}", balance_cents=rng.randrange(0, 500_000))
        for i in range(n)
    )
