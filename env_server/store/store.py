"""The control-plane store: every episode event is committed here before its response returns."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    JSON,
    Connection,
    DateTime,
    Engine,
    String,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from env_server.errors import BackendError
from env_server.store.events import Event, LoggedEvent, parse_event
from env_server.store.models import EpisodeRecord, EventRecord, IdempotencyKeyRecord, ScoreRecord


def utcnow() -> datetime:
    """Now, in UTC without a zone (how the store keeps every instant)."""
    return datetime.now(UTC).replace(tzinfo=None)


def make_store_engine(url: str, pool_size: int = 8) -> Engine:
    """An engine for the store URL; a SQLite file gets WAL mode and a busy timeout for several workers."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True)


def _append_statement() -> Any:
    """`INSERT INTO events ... SELECT max(seq) + 1 ... RETURNING seq`, built once with bound parameters."""
    events = cast(Table, EventRecord.__table__)
    episode_id = bindparam("episode_id", type_=String)
    next_seq = select(
        episode_id,
        func.coalesce(func.max(events.c.seq), 0) + 1,
        bindparam("kind", type_=String),
        bindparam("payload", type_=JSON),
        bindparam("created_at", type_=DateTime),
    ).where(events.c.episode_id == episode_id)
    columns = ["episode_id", "seq", "kind", "payload", "created_at"]
    return insert(events).from_select(columns, next_seq).returning(events.c.seq)


_APPEND = _append_statement()
_EPISODES = cast(Table, EpisodeRecord.__table__)
_EVENTS = cast(Table, EventRecord.__table__)
#: The episode row by id: a Core select, about a quarter of an ORM `Session.get` on every request.
_EPISODE = select(_EPISODES).where(_EPISODES.c.id == bindparam("episode_id"))
_SCORES = cast(Table, ScoreRecord.__table__)
_KEYS = cast(Table, IdempotencyKeyRecord.__table__)
#: The event a tool call's idempotency key recorded, if any (one indexed lookup).
_KEYED = (
    select(_EVENTS.c.seq, _EVENTS.c.created_at, _EVENTS.c.kind, _EVENTS.c.payload)
    .join(_KEYS, (_KEYS.c.episode_id == _EVENTS.c.episode_id) & (_KEYS.c.seq == _EVENTS.c.seq))
    .where(_KEYS.c.episode_id == bindparam("episode_id"), _KEYS.c.key == bindparam("key"))
)
_EVENTS_AFTER = (
    select(_EVENTS.c.seq, _EVENTS.c.created_at, _EVENTS.c.kind, _EVENTS.c.payload)
    .where(_EVENTS.c.episode_id == bindparam("episode_id"), _EVENTS.c.seq > bindparam("after"))
    .order_by(_EVENTS.c.seq)
)
_SCORE = select(_SCORES.c.result).where(_SCORES.c.episode_id == bindparam("episode_id"))
_FINISH = (
    update(_EPISODES)
    .where(_EPISODES.c.id == bindparam("episode_id"))
    .values(status="finished", finished_at=bindparam("finished_at"))
)
#: The last sequence number of an episode's events (0 for none).
_LAST_SEQ = select(func.coalesce(func.max(_EVENTS.c.seq), 0)).where(
    _EVENTS.c.episode_id == bindparam("episode_id")
)
_EPISODE_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:episode_id))")


class Store:
    """Episodes, events and scores. Methods are small transactions; none holds a session open."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        # SQLite has one writer at a time and makes waiting writers sleep-poll (up to 100 ms a nap): queue
        # this process's writers on a lock instead, so concurrent requests do not stall on each other.
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else None
        self._postgres = engine.dialect.name == "postgresql"

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction, committed on exit (Core: an ORM session's set-up costs as much as a write)."""
        with self._write_lock or nullcontext(), self.engine.begin() as conn:
            yield conn

    def session(self) -> Session:
        """A new session (callers use it as a context manager)."""
        return self._sessions()

    def create_episode(self, record: EpisodeRecord, first_event: Event) -> None:
        """Insert the episode and its first event in one transaction."""
        record.created_at = utcnow()
        # unset attributes are left out, so the columns' defaults apply as they would in the ORM
        row = {c.key: v for c in _EPISODES.columns if (v := getattr(record, c.key)) is not None}
        with self.writing() as conn:
            conn.execute(insert(_EPISODES), row)
            conn.execute(
                insert(_EVENTS),
                {
                    "episode_id": record.id,
                    "seq": 1,
                    "kind": first_event.kind,
                    "payload": first_event.payload(),
                    "created_at": record.created_at,
                },
            )

    def episode(self, episode_id: str, *, include_disposed: bool = False) -> EpisodeRecord | None:
        """The episode, or None if it does not exist or was disposed of.

        Args:
            episode_id: The episode's id.
            include_disposed: Return disposed episodes too: their events stay in the store, and the viewer
                shows them (read-only) where the REST API no longer does.
        """
        with self.engine.connect() as conn:
            row = conn.execute(_EPISODE, {"episode_id": episode_id}).one_or_none()
        if row is None or (row.disposed and not include_disposed):
            return None
        return EpisodeRecord(**row._mapping)

    def last_seq(self, episode_id: str) -> int:
        """The sequence number of the episode's last event (0 if it has none): is a copy up to date?"""
        with self.engine.connect() as conn:
            return int(conn.execute(_LAST_SEQ, {"episode_id": episode_id}).scalar_one())

    def list_episodes(
        self,
        *,
        task_id: str | None = None,
        domain: str | None = None,
        state: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[tuple[EpisodeRecord, ScoreRecord | None]]:
        """Episodes, newest first, each with its score if it has one (for browsing; read-only).

        Args:
            task_id: Only this task's episodes.
            domain: Only this domain's episodes.
            state: `active`, `finished` or `disposed` (disposed ones are listed only when asked for).
            limit: At most this many.
            offset: Skip this many of the newest first (paging).
        """
        query = select(EpisodeRecord, ScoreRecord).outerjoin(
            ScoreRecord, ScoreRecord.episode_id == EpisodeRecord.id
        )
        if task_id is not None:
            query = query.where(EpisodeRecord.task_id == task_id)
        if domain is not None:
            query = query.where(EpisodeRecord.domain == domain)
        query = query.where(EpisodeRecord.disposed.is_(state == "disposed"))
        if state in ("active", "finished"):
            query = query.where(EpisodeRecord.status == state)
        query = query.order_by(EpisodeRecord.created_at.desc(), EpisodeRecord.id).limit(limit).offset(offset)
        with self._sessions() as s:
            return [(row[0], row[1]) for row in s.execute(query).all()]

    def keyed_event(self, episode_id: str, key: str) -> LoggedEvent | None:
        """The event recorded under a tool call's idempotency key in this episode, if any."""
        with self.engine.connect() as conn:
            row = conn.execute(_KEYED, {"episode_id": episode_id, "key": key}).first()
        if row is None:
            return None
        return LoggedEvent(seq=row.seq, created_at=row.created_at, event=parse_event(row.kind, row.payload))

    def append_event(
        self, episode_id: str, event: Event, idempotency_key: str | None = None, **episode_updates: Any
    ) -> int:
        """Append an event (and optionally update the episode row) atomically; returns its sequence number.

        One `INSERT ... SELECT max(seq) + 1 ... RETURNING seq` statement: this runs on every tool call.
        Appends to one episode are serialised — by a transaction-scoped advisory lock on PostgreSQL (any
        worker may append), by this process's write lock on SQLite — and a collision with another process
        on a shared SQLite file (a taken sequence number, a stale snapshot) is retried. A tool call's
        `idempotency_key` is recorded with its event, in the same transaction (`keyed_event`).
        """
        values = {
            "episode_id": episode_id,
            "kind": event.kind,
            "payload": event.payload(),
            "created_at": utcnow(),
        }
        for attempt in range(20):
            try:
                with self.writing() as conn:
                    if self._postgres:
                        conn.execute(_EPISODE_LOCK, {"episode_id": episode_id})
                    seq = conn.execute(_APPEND, values).scalar_one()
                    if idempotency_key is not None:  # in the same transaction: both or neither
                        conn.execute(
                            _KEYS.insert().values(episode_id=episode_id, key=idempotency_key, seq=seq)
                        )
                    if episode_updates:
                        conn.execute(
                            update(_EPISODES).where(_EPISODES.c.id == episode_id).values(**episode_updates)
                        )
                return int(seq)
            except (IntegrityError, OperationalError) as exc:
                if isinstance(exc, OperationalError) and "locked" not in str(exc.orig):
                    raise
                time.sleep(0.001 * attempt)
        raise BackendError(f"could not append an event to episode {episode_id}: the store stayed busy")

    def events(self, episode_id: str, after: int = 0) -> list[LoggedEvent]:
        """The episode's events in order (those after sequence number `after`)."""
        with self.engine.connect() as conn:
            rows = conn.execute(_EVENTS_AFTER, {"episode_id": episode_id, "after": after})
            return [
                LoggedEvent(seq=r.seq, created_at=r.created_at, event=parse_event(r.kind, r.payload))
                for r in rows
            ]

    def update_episode(self, episode_id: str, **values: Any) -> None:
        """Set columns of the episode row."""
        with self.writing() as conn:
            conn.execute(update(_EPISODES).where(_EPISODES.c.id == episode_id).values(**values))

    def save_score(
        self, episode_id: str, status: str, reward: int | None, result: dict[str, Any]
    ) -> dict[str, Any]:
        """Record the score once; a second call returns the first score unchanged (idempotence)."""
        try:
            with self.writing() as conn:
                conn.execute(
                    insert(_SCORES),
                    {
                        "episode_id": episode_id,
                        "status": status,
                        "reward": reward,
                        "result": result,
                        "created_at": utcnow(),
                    },
                )
                conn.execute(_FINISH, {"episode_id": episode_id, "finished_at": utcnow()})
            return result
        except IntegrityError:
            existing = self.score(episode_id)
            if existing is None:  # not a second score: some other constraint failed
                raise
            return existing

    def score(self, episode_id: str) -> dict[str, Any] | None:
        """The saved score, if any."""
        with self.engine.connect() as conn:
            result = conn.execute(_SCORE, {"episode_id": episode_id}).scalar_one_or_none()
        return cast(dict[str, Any] | None, result)
