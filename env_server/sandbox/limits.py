"""Column limits checked before a flush, so both backends refuse the same values with the same message.

PostgreSQL refuses text longer than a `String(n)` column; SQLite stores it. A tool session checks lengths
itself before writing, and the agent gets a refusal that names the column, whatever the backend.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, event, inspect
from sqlalchemy.orm import Session

from env_server.domain import ToolError


class SandboxSession(Session):
    """The ORM session tools get: a plain session plus the length check below."""


@event.listens_for(SandboxSession, "before_flush")
def _check_lengths(session: Session, _context: Any, _instances: Any) -> None:
    for obj in (*session.new, *session.dirty):
        mapper = inspect(obj).mapper
        for attr in mapper.column_attrs:
            column = attr.columns[0]
            limit = getattr(column.type, "length", None) if isinstance(column.type, String) else None
            value = getattr(obj, attr.key, None)
            if limit and isinstance(value, str) and len(value) > limit:
                raise ToolError(
                    f"{column.table.name}.{column.name} takes at most {limit} characters ({len(value)} given)"
                )
