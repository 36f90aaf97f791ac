"""PostgreSQL sandboxes: each episode is a schema cloned from its task's template schema.

Templates are built once per (schema, seed, patch) under an advisory lock, so several workers can share them.
An episode's schema is named after its id, so any worker can serve any request of any episode: no state
lives in worker memory, and a restart loses nothing. Creating a sandbox is one round trip: the schema's DDL
and an `INSERT ... SELECT` per table, rendered once per domain and sent as one script.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, MetaData, create_engine, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex, CreateTable

from env_server.domain import Domain
from env_server.domain._context import internal_metadata
from env_server.sandbox.base import Sandbox, SandboxEngine
from env_server.sandbox.template import Template, create_tables, populate
from env_server.scoring.snapshot import Snapshot

#: Stand-ins for the target and source schema names in the cached clone script (both are safe identifiers).
_PLACEHOLDER = "gs_schema_placeholder"
_SOURCE = "gs_source_placeholder"


def episode_schema(sandbox_id: str) -> str:
    """The schema of an episode's sandbox (ids are hex, so the name is a safe identifier)."""
    if not sandbox_id.isalnum():
        raise ValueError(f"sandbox id must be alphanumeric, got {sandbox_id!r}")
    return f"gs_e_{sandbox_id.lower()}"


def template_schema(template: Template) -> str:
    """The schema holding a template (a hash of its key keeps the name under 63 bytes)."""
    return "gs_t_" + hashlib.sha256(template.key.encode()).hexdigest()[:32]


class PostgresSandbox(Sandbox):
    """An episode schema; every statement runs with the schema translated in."""

    dialect = "postgres"

    def __init__(self, sandbox_id: str, template: Template, engine: PostgresSandboxEngine) -> None:
        super().__init__(sandbox_id, template)
        self.schema = episode_schema(sandbox_id)
        self._owner = engine

    @contextmanager
    def connection(self, *, commit: bool = True) -> Iterator[Connection]:
        """See `Sandbox.connection`."""
        with self._owner.engine.connect() as conn:
            conn.execution_options(schema_translate_map={None: self.schema})
            trans = conn.begin()
            if commit:  # serialise writers of one episode, whichever worker serves them
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:s))"), {"s": self.schema})
            try:
                yield conn
            except BaseException:
                trans.rollback()
                raise
            if commit:
                trans.commit()
            else:
                trans.rollback()

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: a READ ONLY transaction seeing only this schema."""
        with self.connection(commit=False) as conn:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            conn.exec_driver_sql(f'SET LOCAL search_path TO "{self.schema}"')
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
            yield conn

    def dispose(self) -> None:
        """Drop the schema and everything in it."""
        with self._owner.engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


class PostgresSandboxEngine(SandboxEngine):
    """Schema-per-episode sandboxes in one PostgreSQL database."""

    backend = "postgresql"

    def __init__(self, url: str, pool_size: int = 8, max_snapshots: int = 256) -> None:
        self.engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True)
        self._ready: set[str] = set()
        self._scripts: dict[str, str] = {}
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._max_snapshots = max_snapshots
        self._lock = threading.Lock()

    def _ensure_template(self, template: Template) -> str:
        schema = template_schema(template)
        if schema in self._ready:
            return schema
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": schema})
            exists = conn.scalar(text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema})
            if not exists:
                conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
                conn.execution_options(schema_translate_map={None: schema})
                create_tables(conn, template.domain)
                populate(conn, template)
        with self._lock:
            self._ready.add(schema)
        return schema

    def _clone_script(self, domain: Domain) -> str:
        """DDL plus data copy for one sandbox, with placeholders for the target and source schemas."""
        if domain.name not in self._scripts:
            dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
            tables = [*domain.metadata.sorted_tables, *internal_metadata.sorted_tables]
            scratch = MetaData()
            statements = [f'CREATE SCHEMA "{_PLACEHOLDER}"']
            for table in tables:
                moved = table.to_metadata(scratch, schema=_PLACEHOLDER)
                statements.append(str(CreateTable(moved).compile(dialect=dialect)))
                statements += [str(CreateIndex(ix).compile(dialect=dialect)) for ix in moved.indexes]
            for table in tables:
                statements.append(
                    f'INSERT INTO "{_PLACEHOLDER}"."{table.name}" SELECT * FROM "{_SOURCE}"."{table.name}"'
                )
            self._scripts[domain.name] = ";\n".join(statements)
        return self._scripts[domain.name]

    def create(self, sandbox_id: str, template: Template) -> PostgresSandbox:
        """See `SandboxEngine.create`."""
        source = self._ensure_template(template)
        sandbox = PostgresSandbox(sandbox_id, template, self)
        script = self._clone_script(template.domain)
        script = script.replace(_PLACEHOLDER, sandbox.schema).replace(_SOURCE, source)
        with self.engine.begin() as conn:
            conn.exec_driver_sql(script)
        return sandbox

    def attach(self, sandbox_id: str, template: Template) -> PostgresSandbox | None:
        """See `SandboxEngine.attach`."""
        with self.engine.connect() as conn:
            found = conn.scalar(
                text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": episode_schema(sandbox_id)}
            )
        return PostgresSandbox(sandbox_id, template, self) if found else None

    def initial_snapshot(self, template: Template) -> Snapshot:
        """See `SandboxEngine.initial_snapshot`."""
        schema = self._ensure_template(template)
        with self._lock:
            if schema in self._snapshots:
                self._snapshots.move_to_end(schema)
                return self._snapshots[schema]
        reader = PostgresSandbox("template", template, self)
        reader.schema = schema
        snapshot = reader.snapshot()
        with self._lock:
            self._snapshots[schema] = snapshot
            while len(self._snapshots) > self._max_snapshots:
                self._snapshots.popitem(last=False)
        return snapshot

    def drop_all(self) -> None:
        """Drop every groundstate schema in the database (tests and `groundstate db reset-sandboxes`)."""
        with self.engine.begin() as conn:
            names = conn.scalars(
                text(
                    "SELECT nspname FROM pg_namespace "
                    "WHERE nspname LIKE 'gs\\_e\\_%' OR nspname LIKE 'gs\\_t\\_%'"
                )
            ).all()
            for name in names:
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        with self._lock:
            self._ready.clear()
            self._snapshots.clear()

    def close(self) -> None:
        """Close pooled connections."""
        self.engine.dispose()
