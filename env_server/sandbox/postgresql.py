"""PostgreSQL sandboxes: each episode is a schema cloned from its task's template schema.

A domain's seed is built once into a base schema; a task's template schema is a clone of the base with the
task's patch applied; an episode's schema is a clone of the template. Schemas are built under advisory
locks and named after what they hold, so several workers share them, and an episode's schema is named after
its id, so any worker can serve any request of any episode: no state lives in worker memory. Creating a
sandbox is one round trip: DDL, an `INSERT ... SELECT` per table and the change-log triggers, rendered once
per domain and sent as one script.
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
from env_server.sandbox import changelog
from env_server.sandbox.base import Sandbox, SandboxEngine
from env_server.sandbox.template import Template, apply_patch, create_tables, seed
from env_server.scoring.snapshot import Snapshot

#: Stand-ins for the target and source schema names in the cached clone script (both are safe identifiers).
_TARGET = "gs_target_placeholder"
_SOURCE = "gs_source_placeholder"


def episode_schema(sandbox_id: str) -> str:
    """The schema of an episode's sandbox (ids are hex, so the name is a safe identifier)."""
    if not sandbox_id.isalnum():
        raise ValueError(f"sandbox id must be alphanumeric, got {sandbox_id!r}")
    return f"gs_e_{sandbox_id.lower()}"


#: Bumped whenever the layout of sandbox schemas changes, so schemas built by older code are never reused.
LAYOUT_VERSION = 2


def _hashed(prefix: str, key: str) -> str:
    """A schema name under 63 bytes for an arbitrary key (and the layout version)."""
    return prefix + hashlib.sha256(f"{LAYOUT_VERSION}:{key}".encode()).hexdigest()[:32]


class PostgresSandbox(Sandbox):
    """A schema; every statement runs with the schema translated in."""

    dialect = "postgres"

    def __init__(
        self, sandbox_id: str, template: Template, engine: PostgresSandboxEngine, schema: str
    ) -> None:
        super().__init__(sandbox_id, template)
        self.schema = schema
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
        self._bases: dict[str, Snapshot] = {}
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._max_snapshots = max_snapshots
        self._lock = threading.Lock()

    # -- schemas ---------------------------------------------------------------------------------------------

    def _base_schema(self, domain: Domain) -> str:
        schema = _hashed("gs_b_", domain.fingerprint)

        def build(conn: Connection) -> None:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
            conn.execution_options(schema_translate_map={None: schema})
            create_tables(conn, domain)
            seed(conn, domain)
            for statement in changelog.postgres_triggers(domain, schema):
                conn.exec_driver_sql(statement)

        return self._ensure(schema, build)

    def _template_schema(self, template: Template) -> str:
        base = self._base_schema(template.domain)
        if not template.patch:
            return base
        schema = _hashed("gs_t_", template.key)

        def build(conn: Connection) -> None:
            conn.exec_driver_sql(self._clone(template.domain, schema, base))
            conn.execution_options(schema_translate_map={None: schema})
            apply_patch(conn, template.domain, template.patch)  # logged: the template's own change log

        return self._ensure(schema, build)

    def _ensure(self, schema: str, build: object) -> str:
        """Create `schema` with `build(conn)` unless it exists; safe across workers (advisory lock)."""
        if schema in self._ready:
            return schema
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": schema})
            if not conn.scalar(text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema}):
                build(conn)  # type: ignore[operator]
        with self._lock:
            self._ready.add(schema)
        return schema

    def _clone(self, domain: Domain, target: str, source: str) -> str:
        """One script that creates `target` as a copy of `source` (tables, rows, change-log triggers)."""
        if domain.name not in self._scripts:
            dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
            scratch = MetaData()
            tables = [t.to_metadata(scratch, schema=_TARGET) for t in domain.metadata.sorted_tables]
            tables += [t.to_metadata(scratch, schema=_TARGET) for t in internal_metadata.sorted_tables]
            statements = [f'CREATE SCHEMA "{_TARGET}"']
            for table in tables:
                statements.append(str(CreateTable(table).compile(dialect=dialect)))
                statements += [str(CreateIndex(ix).compile(dialect=dialect)) for ix in table.indexes]
            statements += [
                f'INSERT INTO "{_TARGET}"."{t.name}" SELECT * FROM "{_SOURCE}"."{t.name}"'
                for t in tables
                if t.name != changelog.changes_table.name
            ]
            statements += changelog.postgres_triggers(domain, _TARGET)
            self._scripts[domain.name] = ";\n".join(statements)
        return self._scripts[domain.name].replace(_TARGET, target).replace(_SOURCE, source)

    # -- SandboxEngine ---------------------------------------------------------------------------------------

    def create(self, sandbox_id: str, template: Template) -> PostgresSandbox:
        """See `SandboxEngine.create`."""
        source = self._template_schema(template)
        sandbox = PostgresSandbox(sandbox_id, template, self, episode_schema(sandbox_id))
        with self.engine.begin() as conn:
            conn.exec_driver_sql(self._clone(template.domain, sandbox.schema, source))
        return sandbox

    def attach(self, sandbox_id: str, template: Template) -> PostgresSandbox | None:
        """See `SandboxEngine.attach`."""
        schema = episode_schema(sandbox_id)
        with self.engine.connect() as conn:
            found = conn.scalar(text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema})
        return PostgresSandbox(sandbox_id, template, self, schema) if found else None

    def initial_snapshot(self, template: Template) -> Snapshot:
        """See `SandboxEngine.initial_snapshot`: the base snapshot, the template's logged patch over it."""
        key = template.key
        with self._lock:
            if key in self._snapshots:
                self._snapshots.move_to_end(key)
                return self._snapshots[key]
        domain = template.domain
        if domain.fingerprint not in self._bases:
            reader = PostgresSandbox("base", Template(domain), self, self._base_schema(domain))
            self._bases[domain.fingerprint] = reader.snapshot()
        snapshot = self._bases[domain.fingerprint]
        if template.patch:
            reader = PostgresSandbox("template", template, self, self._template_schema(template))
            snapshot = snapshot.overlay(reader.changed_rows())
        with self._lock:
            self._snapshots[key] = snapshot
            while len(self._snapshots) > self._max_snapshots:
                self._snapshots.popitem(last=False)
        return snapshot

    def drop_all(self) -> None:
        """Drop every groundstate schema in the database."""
        with self.engine.begin() as conn:
            names = conn.scalars(text("SELECT nspname FROM pg_namespace WHERE nspname ~ '^gs_[bte]_'")).all()
            for name in names:
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        with self._lock:
            self._ready.clear()
            self._snapshots.clear()
            self._bases.clear()

    def close(self) -> None:
        """Close pooled connections."""
        self.engine.dispose()
