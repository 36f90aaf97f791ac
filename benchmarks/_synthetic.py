"""A synthetic domain whose seed size is a parameter, for measuring how costs scale with data size."""

from __future__ import annotations

import random
from datetime import datetime
from functools import cache

from sqlalchemy import ForeignKey, Integer, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from env_server.domain import Domain


@cache
def synthetic_domain(rows: int) -> Domain:
    """A two-table domain with `rows` rows in all (customers and their orders)."""

    class Base(DeclarativeBase):
        metadata = MetaData()

    class Customer(Base):
        __tablename__ = "customers"
        id: Mapped[str] = mapped_column(String(16), primary_key=True)
        name: Mapped[str] = mapped_column(String(80))

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[str] = mapped_column(String(16), primary_key=True)
        customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), index=True)
        total_cents: Mapped[int] = mapped_column(Integer)

    def seed(session: Session, rng: random.Random) -> None:
        customers = rows // 4
        session.add_all(Customer(id=f"C-{i:06d}", name=f"customer {i}") for i in range(customers))
        session.flush()
        session.add_all(
            Order(
                id=f"O-{i:06d}",
                customer_id=f"C-{rng.randrange(customers):06d}",
                total_cents=rng.randrange(10**5),
            )
            for i in range(rows - customers)
        )

    return Domain(
        name=f"synthetic{rows}",
        description="synthetic",
        metadata=Base.metadata,
        seed=seed,
        now=datetime(2026, 1, 1),
        tools=[],
        policy="",
    )
