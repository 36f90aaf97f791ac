"""PostgreSQL sandboxes: each episode gets a pooled schema, refilled from its task's template schema.

A domain's seed is built once into a base schema; a task's template schema is the base's rows plus the
task's patch. Episode sandboxes are *slots*: schemas with the domain's tables and change-log triggers,
recorded in `public.gs_sandbox_slots` with the episode that holds them. Starting an episode claims a free
slot (or creates one) and refills it from the template — a `DELETE` and an `INSERT ... SELECT` per table,
in one round trip, with triggers off — so steady-state episode creation issues no DDL and the system
catalogs do not churn. Disposing of an episode frees its slot; every few uses a slot's tables are
vacuumed. Every name lives in the database, so any worker can serve any request of any episode, and a
restart loses nothing.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from sqlalchemy import Connection, MetaData, Table, create_engine, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex, CreateTable

from env_server.domain import Domain
from env_server.domain._context import internal_metadata
from env_server.sandbox import changelog
from env_server.sandbox.base import Sandbox, SandboxEngine, transaction
from env_server.sandbox.template import Template, apply_patch, create_tables, seed
from env_server.scoring.snapshot import Snapshot

logger = logging.getLogger(__name__)

#: Stand-ins for the target and source schema names in cached scripts (both are safe identifiers).
_TARGET = "gs_target_placeholder"
_SOURCE = "gs_source_placeholder"
#: Bumped whenever the layout of sandbox schemas changes, so schemas built by older code are never reused.
LAYOUT_VERSION = 3
_REGISTRY = "public.gs_sandbox_slots"
#: A slot's tables are vacuumed after this many uses, so refills stay fast even where autovacuum is off.
VACUUM_EVERY = 16
#: The slot registry is vacuumed after this many releases by one process.
REGISTRY_VACUUM_EVERY = 128


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
            with transaction(conn, commit=commit):
                if commit:  # serialise writers of one episode, whichever worker serves them
                    conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:s))"), {"s": self.schema})
                yield conn

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: a READ ONLY transaction seeing only this schema."""
        with self.connection(commit=False) as conn:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            conn.exec_driver_sql(f'SET LOCAL search_path TO "{self.schema}"')
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
            yield conn

    def dispose(self) -> None:
        """Give the slot back to the pool; nothing of this episode is visible to the next holder."""
        self._owner.release(self)


class PostgresSandboxEngine(SandboxEngine):
    """Pooled schema sandboxes in one PostgreSQL database."""

    backend = "postgresql"

    def __init__(self, url: str, pool_size: int = 8, max_snapshots: int = 256) -> None:
        self.engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True)
        self._maintenance = ThreadPoolExecutor(1, thread_name_prefix="gs-vacuum")
        self._releases = 0
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
            conn.exec_driver_sql(self._script("ddl", template.domain, schema))
            conn.exec_driver_sql(self._script("fill", template.domain, schema, base))
            conn.execution_options(schema_translate_map={None: schema})
            apply_patch(conn, template.domain, template.patch)  # logged: the template's own change log

        return self._ensure(schema, build)

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

    def _ensure_registry(self) -> None:
        if _REGISTRY in self._ready:
            return
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('gs_sandboxes'))"))
            conn.exec_driver_sql(
                f"CREATE TABLE IF NOT EXISTS {_REGISTRY} (schema text PRIMARY KEY, pool text NOT NULL, "
                "episode_id text UNIQUE, uses integer NOT NULL DEFAULT 0)"
            )
            conn.exec_driver_sql(
                f"CREATE INDEX IF NOT EXISTS gs_sandbox_slots_free ON {_REGISTRY} (pool) "
                "WHERE episode_id IS NULL"
            )
        with self._lock:
            self._ready.add(_REGISTRY)

    def _script(self, kind: str, domain: Domain, target: str, source: str = "") -> str:
        """A cached script: `ddl` creates a slot (tables, triggers); `fill` refills a slot from a source."""
        key = f"{kind}:{domain.name}"
        if key not in self._scripts:
            tables = self._tables(domain)
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

    @staticmethod
    def _tables(domain: Domain) -> list[Table]:
        scratch = MetaData()
        tables = [t.to_metadata(scratch, schema=_TARGET) for t in domain.metadata.sorted_tables]
        return tables + [t.to_metadata(scratch, schema=_TARGET) for t in internal_metadata.sorted_tables]

    # -- SandboxEngine ---------------------------------------------------------------------------------------

    def create(self, sandbox_id: str, template: Template) -> PostgresSandbox:
        """See `SandboxEngine.create`: claim a free slot of the domain (or add one) and refill it."""
        source = self._template_schema(template)
        self._ensure_registry()
        pool = _hashed("", template.domain.fingerprint)
        with self.engine.begin() as conn:
            schema = conn.scalar(
                text(
                    f"UPDATE {_REGISTRY} SET episode_id = :e WHERE schema = (SELECT schema FROM {_REGISTRY} "
                    "WHERE pool = :p AND episode_id IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING schema"
                ),
                {"e": sandbox_id, "p": pool},
            )
            if schema is None:
                schema = f"gs_s_{uuid.uuid4().hex}"
                conn.exec_driver_sql(self._script("ddl", template.domain, schema))
                conn.execute(
                    text(f"INSERT INTO {_REGISTRY} (schema, pool, episode_id) VALUES (:s, :p, :e)"),
                    {"s": schema, "p": pool, "e": sandbox_id},
                )
            conn.exec_driver_sql(self._script("fill", template.domain, schema, source))
        return PostgresSandbox(sandbox_id, template, self, schema)

    def attach(self, sandbox_id: str, template: Template) -> PostgresSandbox | None:
        """See `SandboxEngine.attach`: the slot the episode holds, if any."""
        self._ensure_registry()
        with self.engine.connect() as conn:
            schema = conn.scalar(
                text(f"SELECT schema FROM {_REGISTRY} WHERE episode_id = :e"), {"e": sandbox_id}
            )
        return None if schema is None else PostgresSandbox(sandbox_id, template, self, schema)

    def release(self, sandbox: PostgresSandbox) -> None:
        """Free the episode's slot for the next episode (its rows are replaced on the next claim)."""
        with self.engine.begin() as conn:
            uses = conn.scalar(
                text(
                    f"UPDATE {_REGISTRY} SET episode_id = NULL, uses = uses + 1 "
                    "WHERE episode_id = :e RETURNING uses"
                ),
                {"e": sandbox.sandbox_id},
            )
        if uses and uses % VACUUM_EVERY == 0:  # off the request path: a VACUUM takes tens of milliseconds
            tables = self._tables(sandbox.template.domain)
            self._maintenance.submit(self._vacuum, [f'VACUUM "{sandbox.schema}"."{t.name}"' for t in tables])
        with self._lock:
            self._releases += 1
            registry_due = self._releases % REGISTRY_VACUUM_EVERY == 0
        if registry_due:  # every claim and release updates a registry row
            self._maintenance.submit(self._vacuum, [f"VACUUM {_REGISTRY}"])

    def _vacuum(self, statements: list[str]) -> None:
        """Run VACUUM statements; a failure only delays the next vacuum, so it is logged, not raised."""
        try:
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                for statement in statements:
                    conn.exec_driver_sql(statement)
        except Exception:
            logger.exception("%s failed", statements[0])

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
        """Finish pending maintenance, then close pooled connections."""
        self._maintenance.shutdown(wait=True)
        self.engine.dispose()
