"""Toy bank tables."""

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Integer, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """The toy domain's own MetaData."""

    metadata = MetaData()


class Account(Base):
    """A bank account."""

    __tablename__ = "accounts"
    __table_args__ = (CheckConstraint("status IN ('open', 'frozen')", name="ck_account_status"),)
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    owner: Mapped[str] = mapped_column(String(80))
    balance_cents: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="open")


class Transfer(Base):
    """Money moved between accounts."""

    __tablename__ = "transfers"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    source_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    target_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    amount_cents: Mapped[int] = mapped_column(Integer)
    memo: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class Ticket(Base):
    """A support ticket about an account."""

    __tablename__ = "tickets"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    topic: Mapped[str] = mapped_column(String(16))
    priority: Mapped[str] = mapped_column(String(16), default="normal")
    note: Mapped[str] = mapped_column(String(200), default="")
