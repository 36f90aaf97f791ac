"""The agent's read-only SQL (analytics' `sql_query`, gold SQL): the parser's lock, then the database's."""

from __future__ import annotations

from typing import Any

from env_server.execution.sql_guard import check_select
from env_server.sandbox import Sandbox


def readonly_query(
    sandbox: Sandbox, sql: str, limit: int, timeout_ms: int = 2000
) -> tuple[list[str], list[list[Any]], bool]:
    """Refuse anything but one SELECT over the domain's tables, then run it read-only in `sandbox`.

    Returns the column names, at most `limit` rows of JSON-ready values, and whether rows were cut off;
    a refusal (of the parser or the database) is a `ToolError`, the agent's.
    """
    check_select(sql, sandbox.template.domain.metadata.tables.keys(), sandbox.dialect)
    return sandbox.readonly_select(sql, limit, timeout_ms)
