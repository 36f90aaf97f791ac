"""Building the schemas of PostgreSQL sandboxes: a domain's seeded base, a task's template, a slot's tables.

Base and template schemas are built once, by whichever worker needs them first (an advisory lock keeps two
from building the same one). Creating and refilling slots runs cached SQL scripts, compiled once per domain,
so steady-state episode creation issues one round trip.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import Connection, Engine, MetaData, Table, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex, CreateTable

from env_server.domain import Domain
from env_server.sandbox import changelog
from env_server.sandbox.bookkeeping import internal_metadata
from env_server.sandbox.postgres.naming import base_schema, template_schema
from env_server.sandbox.template import Template, apply_patch, create_tables, seed

#: Stand-ins for the target and source schema names in cached scripts (both are safe identifiers).
_TARGET = "gs_target_placeholder"
_SOURCE = "gs_source_placeholder"


class SchemaBuilder:
    """Builds base and template schemas on demand and writes the scripts that create and refill slots."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._ready: set[str] = set()
        self._scripts: dict[str, str] = {}
        self._lock = threading.Lock()

    def base(self, domain: Domain) -> str:
        """The schema holding `domain`'s seed and change-log triggers, built if missing."""
        schema = base_schema(domain)

        def build(conn: Connection) -> None:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
            conn.execution_options(schema_translate_map={None: schema})
            create_tables(conn, domain)
            seed(conn, domain)
            for statement in changelog.postgres_triggers(domain, schema):
                conn.exec_driver_sql(statement)

        return self._ensure(schema, build)

    def template(self, template: Template) -> str:
        """The schema a task's slots are refilled from: the base itself, or a copy of it plus the patch."""
        base = self.base(template.domain)
        if not template.patch:
            return base
        schema = template_schema(template)

        def build(conn: Connection) -> None:
            conn.exec_driver_sql(self.slot_script(template.domain, schema))
            conn.exec_driver_sql(self.fill_script(template.domain, schema, base))
            conn.execution_options(schema_translate_map={None: schema})
            apply_patch(conn, template.domain, template.patch)  # logged: the template's own change log

        return self._ensure(schema, build)

    def forget(self, schemas: set[str]) -> None:
        """Stop treating `schemas` as built (they were dropped): their next use builds them again."""
        with self._lock:
            self._ready -= schemas

    def _ensure(self, schema: str, build: Callable[[Connection], None]) -> str:
        """Create `schema` with `build(conn)` unless it exists; safe across workers (advisory lock)."""
        if schema in self._ready:
            return schema
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": schema})
            if not conn.scalar(text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema}):
                build(conn)
        with self._lock:
            self._ready.add(schema)
        return schema

    def slot_script(self, domain: Domain, target: str) -> str:
        """SQL creating schema `target` with `domain`'s tables, the sandbox's own tables and the triggers."""
        return self._script("ddl", domain, target)

    def fill_script(self, domain: Domain, target: str, source: str) -> str:
        """SQL replacing every row of slot `target` with those of `source`, triggers off."""
        return self._script("fill", domain, target, source)

    def restore_script(self, domain: Domain, target: str, source: str, changed: set[str]) -> str:
        """SQL putting back, in slot `target`, the rows its change log names, as `source` has them.

        A slot still holding an earlier episode of the same template differs from it only in those rows
        (every write of a tool is logged), so restoring them costs what the episode changed, where the full
        refill copies every row. A row is matched by its logged key: the same `json_build_array(...)::text`
        the triggers write. The ID counters are copied whole, and the change log is emptied.
        """
        logged = f'SELECT pk FROM "{target}"._gs_changes WHERE table_name = '
        tables = [t for t in domain.metadata.sorted_tables if t.name in changed]
        internal = [t for t in internal_metadata.sorted_tables if t.name != changelog.changes_table.name]

        def key(table: Table) -> str:
            columns = ", ".join(f'"{c.name}"' for c in table.primary_key.columns)
            return f"json_build_array({columns})::text"

        statements = [
            "SET LOCAL session_replication_role = replica",
            f"SET LOCAL {changelog.COPYING_SETTING} = 'on'",
            # replica mode: no foreign-key or change-log triggers, so the order of tables does not matter
            *(f'DELETE FROM "{target}"."{t.name}" WHERE {key(t)} IN ({logged}\'{t.name}\')' for t in tables),
            *(
                f'INSERT INTO "{target}"."{t.name}" SELECT * FROM "{source}"."{t.name}" '
                f"WHERE {key(t)} IN ({logged}'{t.name}')"
                for t in tables
            ),
            *(f'DELETE FROM "{target}"."{t.name}"' for t in internal),
            *(f'INSERT INTO "{target}"."{t.name}" SELECT * FROM "{source}"."{t.name}"' for t in internal),
            f'DELETE FROM "{target}"._gs_changes',
            f"SET LOCAL {changelog.COPYING_SETTING} = 'off'",
            "SET LOCAL session_replication_role = origin",
        ]
        return ";\n".join(statements)

    def _script(self, kind: str, domain: Domain, target: str, source: str = "") -> str:
        key = f"{kind}:{domain.name}"
        if key not in self._scripts:
            tables = slot_tables(domain, _TARGET)
            if kind == "ddl":
                dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
                statements = [f'CREATE SCHEMA "{_TARGET}"']
                for table in tables:
                    statements.append(str(CreateTable(table).compile(dialect=dialect)))
                    statements += [str(CreateIndex(ix).compile(dialect=dialect)) for ix in table.indexes]
                statements += changelog.postgres_triggers(domain, _TARGET)
            else:
                copied = [t for t in tables if t.name != changelog.changes_table.name]
                statements = [
                    # replica mode skips foreign-key and change-log triggers while the slot is replaced
                    # wholesale from a consistent source (without it each DELETE scans referencing tables)
                    "SET LOCAL session_replication_role = replica",
                    f"SET LOCAL {changelog.COPYING_SETTING} = 'on'",
                    # DELETE, not TRUNCATE: TRUNCATE swaps files and costs ~100x more on small tables
                    *(f'DELETE FROM "{_TARGET}"."{t.name}"' for t in reversed(tables)),
                    *(
                        f'INSERT INTO "{_TARGET}"."{t.name}" SELECT * FROM "{_SOURCE}"."{t.name}"'
                        for t in copied
                    ),
                    f"SET LOCAL {changelog.COPYING_SETTING} = 'off'",
                    "SET LOCAL session_replication_role = origin",
                ]
            self._scripts[key] = ";\n".join(statements)
        return self._scripts[key].replace(_TARGET, target).replace(_SOURCE, source)


def slot_tables(domain: Domain, schema: str | None = None) -> list[Table]:
    """Every table of a slot: the domain's, then the sandbox's own (ID counters, change log)."""
    tables = [*domain.metadata.sorted_tables, *internal_metadata.sorted_tables]
    if schema is None:
        return tables
    scratch = MetaData()
    return [t.to_metadata(scratch, schema=schema) for t in tables]
