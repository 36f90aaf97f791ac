"""Control-plane tables: episodes, their events and their scores. Changed only through Alembic migrations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, MetaData, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class StoreBase(DeclarativeBase):
    """Base of the control-plane tables."""

    metadata = MetaData(naming_convention=NAMING)


class EpisodeRecord(StoreBase):
    """One episode: which task, which simulated user, and where it stands."""

    __tablename__ = "episodes"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    task_id: Mapped[str] = mapped_column(String(200), index=True)
    domain: Mapped[str] = mapped_column(String(64))
    user_kind: Mapped[str] = mapped_column(String(16))
    user_model: Mapped[str] = mapped_column(String(200), default="")
    user_prompt_version: Mapped[str] = mapped_column(String(64), default="")
    seed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: active -> finished (scored) ; disposed episodes are deleted from view but their events stay.
    status: Mapped[str] = mapped_column(String(16), default="active")
    disposed: Mapped[bool] = mapped_column(Boolean, default=False)
    #: The simulated user ended the conversation.
    user_done: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Set when infrastructure failed mid-episode; the score is then a backend_error.
    backend_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class EventRecord(StoreBase):
    """One event: a message or a tool call with its arguments and result, in order."""

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("episode_id", "seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class IdempotencyKeyRecord(StoreBase):
    """A tool call's idempotency key and the event recording its run: a resent call gets that result back.

    In the store, not in a process, so a resend that reaches another worker or replica still runs once.
    """

    __tablename__ = "idempotency_keys"
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(256), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)


class ScoreRecord(StoreBase):
    """The final verdict of an episode (a serialised `ScoreResult`); written once."""

    __tablename__ = "scores"
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    reward: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class MintedTaskRecord(StoreBase):
    """A generated task the server minted for a running training (`POST /v1/tasks/mint`), validated first.

    Kept here rather than in a file so that every worker and replica serves it at once, and a restart keeps
    serving what a training run already holds ids of.
    """

    __tablename__ = "minted_tasks"
    task_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    domain: Mapped[str] = mapped_column(String(64), index=True)
    family: Mapped[str] = mapped_column(String(100))
    #: Draw index within (domain, family): the id's number, and the draw's RNG seed with `seed`.
    draw_index: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    #: The whole task, gold included (a serialised `shared.tasks.Task`).
    task: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime)
