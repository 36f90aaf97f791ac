"""The sandbox's own tables beside the domain's: ID counters and (registered by `changelog`) the change log.

They live in every sandbox copy so that a replay hands out the same IDs, and they are never part of a
state diff.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import Connection, Integer, MetaData, String, Table, insert, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from env_server.domain import FIRST_GENERATED_ID

#: Tables the sandbox itself keeps beside the domain's; never part of a state diff.
internal_metadata = MetaData()


class _Internal(DeclarativeBase):
    metadata = internal_metadata


class IdCounter(_Internal):
    """The next number for each generated-ID prefix; lives in the sandbox so replays give the same IDs."""

    __tablename__ = "_gs_id_counters"
    prefix: Mapped[str] = mapped_column(String(16), primary_key=True)
    next_value: Mapped[int] = mapped_column(Integer, nullable=False)


_COUNTERS = cast(Table, IdCounter.__table__)


def next_id_number(session: Session, prefix: str) -> int:
    """Take the next number for `prefix` inside the tool's transaction (from `FIRST_GENERATED_ID`).

    One `UPDATE ... RETURNING` on the table rather than loading and flushing an ORM row: every write tool
    that creates a row comes through here, and the ORM round trip was a third of a small write tool's time.
    """
    taken = session.execute(
        update(_COUNTERS)
        .where(_COUNTERS.c.prefix == prefix)
        .values(next_value=_COUNTERS.c.next_value + 1)
        .returning(_COUNTERS.c.next_value)
    ).scalar_one_or_none()
    if taken is not None:
        return int(taken) - 1
    session.execute(insert(_COUNTERS).values(prefix=prefix, next_value=FIRST_GENERATED_ID + 1))
    return FIRST_GENERATED_ID


def id_counters(conn: Connection) -> dict[str, int]:
    """The next number of every prefix this sandbox has generated IDs for."""
    return {
        row.prefix: row.next_value for row in conn.execute(select(IdCounter.prefix, IdCounter.next_value))
    }
