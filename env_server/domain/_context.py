"""What a tool receives: the episode's database session, the domain's frozen clock and an ID source."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.orm import Session

ReadOnlyQuery = Callable[[str, int], tuple[list[str], list[list[Any]], bool]]
#: Takes the next number for an ID prefix inside the tool's transaction (the sandbox keeps the counters).
NextIdNumber = Callable[[str], int]

RowT = TypeVar("RowT")


class ToolError(Exception):
    """A business-rule refusal: its message is returned to the agent as the tool's result."""


@dataclass
class ToolContext:
    """The seam between a tool and its sandbox.

    Attributes:
        session: an ORM session inside the tool call's transaction (committed if the tool returns,
            rolled back if it raises).
        now: the domain's frozen clock; tools never read the real one.
        query: runs one read-only SELECT in the sandbox, `(sql, limit) -> (columns, rows, truncated)`;
            only analytics tools use it.
        next_id_number: the sandbox's ID counter (`new_id` uses it); the server's tool execution gives
            every call one.
    """

    session: Session
    now: datetime
    query: ReadOnlyQuery | None = None
    next_id_number: NextIdNumber | None = None

    def new_id(self, prefix: str) -> str:
        """A deterministic new ID such as "BK-90001", unique within the sandbox."""
        if self.next_id_number is None:
            raise RuntimeError("this ToolContext has no ID counter; run tools through env_server.execution")
        return f"{prefix}-{self.next_id_number(prefix)}"

    def insert(self, row: RowT) -> RowT:
        """Add `row` to the session and flush it, so the database checks it before the tool goes on."""
        self.session.add(row)
        self.session.flush()
        return row

    def get_or_refuse(
        self, model: type[RowT], key: Any, refusal: str, *, where: Callable[[RowT], bool] | None = None
    ) -> RowT:
        """The row of `model` with primary key `key`, or a `ToolError` telling the agent `refusal`.

        Args:
            model: the mapped class.
            key: the primary key (a tuple for a composite key).
            refusal: the agent-facing message when there is no such row, e.g. "Guest G-1 not found".
            where: a further condition the row must meet (e.g. that it belongs to a given policy);
                a row that fails it is refused like a missing one.
        """
        row = self.session.get(model, key)
        if row is None or (where is not None and not where(row)):
            raise ToolError(refusal)
        return row
