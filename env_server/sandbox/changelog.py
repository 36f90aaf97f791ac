"""The change log: triggers record the primary key of every row a sandbox inserts, updates or deletes.

Scoring then reads only the changed rows, so its cost grows with what an episode changed, not with table
sizes. The same log, read right after a task's `initial_patch` is applied, tells which rows the patch
touched, so a task's initial snapshot is the domain's seed snapshot with those rows laid over it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from sqlalchemy import Column, Connection, Table, Text, delete, select, tuple_

from env_server.domain import Domain
from env_server.sandbox.bookkeeping import internal_metadata
from env_server.sandbox.values import python_value

Key = tuple[Any, ...]

changes_table = Table(
    "_gs_changes",
    internal_metadata,
    Column("table_name", Text, primary_key=True),
    Column("pk", Text, primary_key=True, comment="JSON array of the row's primary-key values"),
)


#: A transaction-local setting under which PostgreSQL triggers log nothing (bulk copies into a sandbox).
COPYING_SETTING = "groundstate.copying"


def tracked_tables(domain: Domain) -> list[Table]:
    """The domain tables whose changes are logged (all of them)."""
    return list(domain.metadata.sorted_tables)


def sqlite_triggers(domain: Domain) -> list[str]:
    """CREATE TRIGGER statements for an SQLite sandbox."""
    statements = []
    for table in tracked_tables(domain):
        for op, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            inserts = " ".join(
                f"INSERT OR IGNORE INTO _gs_changes VALUES ('{table.name}', "
                f"json_array({_pk_list(table, r)}));"
                for r in rows
            )
            statements.append(
                f'CREATE TRIGGER "_gs_{op.lower()}_{table.name}" AFTER {op} ON "{table.name}" '
                f"FOR EACH ROW BEGIN {inserts} END"
            )
    return statements


def postgres_triggers(domain: Domain, schema: str) -> list[str]:
    """CREATE FUNCTION/TRIGGER statements for a PostgreSQL sandbox schema."""
    statements = []
    for table in tracked_tables(domain):
        fn = f'"{schema}"."_gs_log_{table.name}"'

        def log(row: str, t: Table = table) -> str:
            return (
                f"INSERT INTO \"{schema}\"._gs_changes VALUES ('{t.name}', "
                f"json_build_array({_pk_list(t, row)})::text) ON CONFLICT DO NOTHING;"
            )

        statements.append(
            f"CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF current_setting('{COPYING_SETTING}', true) = 'on' THEN RETURN NULL; END IF; "
            f"IF TG_OP <> 'INSERT' THEN {log('OLD')} END IF; "
            f"IF TG_OP <> 'DELETE' THEN {log('NEW')} END IF; RETURN NULL; END $$"
        )
        statements.append(
            f'CREATE TRIGGER "_gs_log" AFTER INSERT OR UPDATE OR DELETE ON "{schema}"."{table.name}" '
            f"FOR EACH ROW EXECUTE FUNCTION {fn}()"
        )
    return statements


def _pk_list(table: Table, row: str) -> str:
    return ", ".join(f'{row}."{c.name}"' for c in table.primary_key.columns)


def changed_keys(conn: Connection, domain: Domain) -> dict[str, set[Key]]:
    """Primary keys logged per table, decoded to column values."""
    tables = domain.metadata.tables
    keys: dict[str, set[Key]] = defaultdict(set)
    for name, pk in conn.execute(select(changes_table.c.table_name, changes_table.c.pk)):
        table = tables[name]
        values = json.loads(pk)
        columns = zip(table.primary_key.columns, values, strict=True)
        keys[name].add(tuple(python_value(c.type, v, date_prefix=True) for c, v in columns))
    return keys


def clear(conn: Connection) -> None:
    """Forget the logged changes (after a template's patch is folded into its initial snapshot)."""
    conn.execute(delete(changes_table))


def read_rows(conn: Connection, table: Table, keys: set[Key]) -> list[Any]:
    """The current rows of `table` with these primary keys (deleted ones are simply absent)."""
    pk = list(table.primary_key.columns)
    found: list[Any] = []
    ordered = sorted(keys, key=str)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        condition = pk[0].in_([k[0] for k in chunk]) if len(pk) == 1 else tuple_(*pk).in_(chunk)
        found.extend(conn.execute(select(table).where(condition)).mappings())
    return found
