"""Read-only SQL for analytics tasks: parse the agent's statement and refuse anything but one SELECT.

This is the first of two locks: the statement must be a single SELECT (or set operation) over the domain's
own tables, unqualified, with no server-side functions that reach outside the sandbox. The second lock is
the database itself (`PRAGMA query_only` on SQLite, a READ ONLY transaction with the episode's schema as the
only search path on PostgreSQL), so a statement that slips past the parser still cannot write.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from env_server.domain import ToolError

#: Function-name prefixes that read files, other databases or server state.
_FORBIDDEN_FUNCTIONS = (
    "pg_",
    "lo_",
    "dblink",
    "load_extension",
    "readfile",
    "writefile",
    "current_setting",
    "set_config",
    "query_to_xml",
    "txid_",
    "inet_",
    "version",
    "sqlite_",
)
_WRITES = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Command,
    exp.Into,
    exp.Merge,
)


def check_select(sql: str, tables: Collection[str], dialect: str) -> None:
    """Raise `ToolError` (an agent-visible refusal) unless `sql` is one read-only SELECT over `tables`."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except ParseError as exc:
        raise ToolError(f"the SQL does not parse: {exc.errors[0].get('description', exc)}") from None
    if len(statements) != 1:
        raise ToolError(f"send exactly one SELECT statement (got {len(statements)})")
    statement = statements[0]
    if not isinstance(statement, exp.Select | exp.SetOperation):
        raise ToolError(
            f"only SELECT statements are allowed; the database is read-only (got {statement.key.upper()})"
        )
    for node in statement.walk():
        if isinstance(node, _WRITES):
            raise ToolError(f"only SELECT statements are allowed; found {node.key.upper()}")
        if isinstance(node, exp.Func):
            name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            if name.startswith(_FORBIDDEN_FUNCTIONS):
                raise ToolError(f"the function {name} is not allowed in this sandbox")
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    known = {t.lower() for t in tables}
    for table in statement.find_all(exp.Table):
        if table.args.get("db") or table.args.get("catalog"):
            raise ToolError(
                f"schema-qualified table names are not allowed ({table.sql()}); use bare table names"
            )
        name = table.name.lower()
        if name and name not in known and name not in ctes:
            raise ToolError(f"unknown table '{name}' (tables: {', '.join(sorted(known))})")
