"""What a tool receives: the episode's database session, the domain's frozen clock and an ID source."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, MetaData, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

#: Tables the sandbox itself keeps beside the domain's; never part of a state diff.
internal_metadata = MetaData()


class _Internal(DeclarativeBase):
    metadata = internal_metadata


class IdCounter(_Internal):
    """The next number for each generated-ID prefix; lives in the sandbox so replays give the same IDs."""

    __tablename__ = "_gs_id_counters"
    prefix: Mapped[str] = mapped_column(String(16), primary_key=True)
    next_value: Mapped[int] = mapped_column(Integer, nullable=False)


ReadOnlyQuery = Callable[[str, int], tuple[list[str], list[list[Any]], bool]]

#: First number handed out for a prefix; seeds use lower numbers, so generated IDs never collide.
FIRST_GENERATED_ID = 90001


@dataclass
class ToolContext:
    """The seam between a tool and its sandbox.

    Attributes:
        session: an ORM session inside the tool call's transaction (committed if the tool returns,
            rolled back if it raises).
        now: the domain's frozen clock; tools never read the real one.
        query: runs one read-only SELECT in the sandbox, `(sql, limit) -> (columns, rows, truncated)`;
            only analytics tools use it.
    """

    session: Session
    now: datetime
    query: ReadOnlyQuery | None = None

    def new_id(self, prefix: str) -> str:
        """A deterministic new ID such as "BK-90001", unique within the sandbox."""
        counter = self.session.scalars(select(IdCounter).where(IdCounter.prefix == prefix)).one_or_none()
        if counter is None:
            counter = IdCounter(prefix=prefix, next_value=FIRST_GENERATED_ID)
            self.session.add(counter)
        value = counter.next_value
        counter.next_value = value + 1
        self.session.flush()
        return f"{prefix}-{value}"
