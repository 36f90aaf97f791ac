"""PostgreSQL sandboxes: each episode gets a pooled schema, refilled from its task's template schema.

A domain's seed is built once into a base schema; a task's template schema is the base's rows plus the
task's patch. Episode sandboxes are *slots*: schemas with the domain's tables and change-log triggers,
recorded in `public.gs_sandbox_slots` with the episode that holds them. Starting an episode claims a free
slot (or creates one) and refills it from the template — a `DELETE` and an `INSERT ... SELECT` per table,
in one round trip, with triggers off — so steady-state episode creation issues no DDL and the system
catalogs do not churn. Disposing of an episode frees its slot; every few uses a slot's tables are
vacuumed. Every name lives in the database, so any worker can serve any request of any episode, and a
restart loses nothing. Schemas of older domain versions stay until `groundstate sandboxes prune` drops them.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection, MetaData, Table, create_engine, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.schema import CreateIndex, CreateTable

from env_server.domain import Domain
from env_server.sandbox import changelog
from env_server.sandbox.base import Sandbox, SandboxEngine, transaction
from env_server.sandbox.bookkeeping import internal_metadata
from env_server.sandbox.snapshot import Snapshot
from env_server.sandbox.template import Template, apply_patch, create_tables, seed

logger = logging.getLogger(__name__)

#: Stand-ins for the target and source schema names in cached scripts (both are safe identifiers).
_TARGET = "gs_target_placeholder"
_SOURCE = "gs_source_placeholder"
#: Bumped whenever the layout of sandbox schemas changes, so schemas built by older code are never reused.
LAYOUT_VERSION = 3
_REGISTRY = "public.gs_sandbox_slots"
#: SQLSTATEs of a schema or table that is not there (invalid_schema_name, undefined_table).
_MISSING = ("3F000", "42P01")
#: A slot's tables are vacuumed after this many uses, so refills stay fast even where autovacuum is off.
VACUUM_EVERY = 16
#: The slot registry is vacuumed after this many releases by one process.
REGISTRY_VACUUM_EVERY = 128


@dataclass
class PruneReport:
    """What `PostgresSandboxEngine.prune` dropped (or would drop)."""

    stale_schemas: list[str] = field(default_factory=list)
    """Base and template schemas that no current domain or task maps to."""
    surplus_slots: list[str] = field(default_factory=list)
    """Free slots of retired domains, and of current domains beyond `keep_free`."""
    kept_slots: int = 0
    """Free slots kept for the next episodes."""
    orphaned_slots: list[str] = field(default_factory=list)
    """Slots held longer than `held_hours`: their episodes were never disposed of."""
    held_slots: int = 0
    """Slots that episodes hold (kept)."""


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

    def evict(self) -> None:
        """Keep the slot: another worker may be serving this episode from it (see `Sandbox.evict`)."""


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
            # When the holder claimed it: lets `prune` drop slots whose episode was never disposed of.
            conn.exec_driver_sql(f"ALTER TABLE {_REGISTRY} ADD COLUMN IF NOT EXISTS claimed_at timestamptz")
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
        try:
            return self._claim(sandbox_id, template)
        except ProgrammingError as exc:
            if getattr(exc.orig, "sqlstate", None) not in _MISSING:
                raise
        self._forget(template)  # its template was dropped (`prune`) after this process had it ready
        return self._claim(sandbox_id, template)

    def _forget(self, template: Template) -> None:
        with self._lock:
            self._ready.discard(_hashed("gs_b_", template.domain.fingerprint))
            self._ready.discard(_hashed("gs_t_", template.key))

    def _claim(self, sandbox_id: str, template: Template) -> PostgresSandbox:
        source = self._template_schema(template)
        self._ensure_registry()
        pool = _hashed("", template.domain.fingerprint)
        with self.engine.begin() as conn:
            schema = conn.scalar(
                text(
                    f"UPDATE {_REGISTRY} SET episode_id = :e, claimed_at = now() "
                    f"WHERE schema = (SELECT schema FROM {_REGISTRY} "
                    "WHERE pool = :p AND episode_id IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING schema"
                ),
                {"e": sandbox_id, "p": pool},
            )
            if schema is None:
                schema = f"gs_s_{uuid.uuid4().hex}"
                conn.exec_driver_sql(self._script("ddl", template.domain, schema))
                conn.execute(
                    text(
                        f"INSERT INTO {_REGISTRY} (schema, pool, episode_id, claimed_at) "
                        "VALUES (:s, :p, :e, now())"
                    ),
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
            tables = [*sandbox.template.domain.metadata.sorted_tables, *internal_metadata.sorted_tables]
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

    def prune(
        self,
        templates: Iterable[Template],
        keep_free: int = 8,
        held_hours: float | None = None,
        dry_run: bool = False,
    ) -> PruneReport:
        """Drop the schemas no given template can use, and free slots beyond `keep_free` per domain.

        Base and template schemas are named after a hash of the domain's code and the task's patch, and slot
        pools after the domain's fingerprint, so every change of a domain leaves its older schemas behind.
        This drops base and template schemas that none of `templates` (every task a server serves) maps
        to, every free slot of a pool no current domain owns, and the free slots of current pools beyond
        the `keep_free` least used ones. A slot an episode holds stays, unless `held_hours` is given and it
        was claimed longer ago than that (or before claim times were kept): such a slot belongs to an
        episode nobody scored or disposed of (a worker's eviction never frees a slot). A server that had
        one of the dropped schemas ready rebuilds it on its next use.

        Args:
            templates: the templates of every task the servers sharing this database serve.
            keep_free: free slots to keep per current domain (they make the next starts cheap).
            held_hours: drop held slots claimed longer ago than this many hours.
            dry_run: report what would be dropped, drop nothing.
        """
        self._ensure_registry()
        current = list(templates)
        fingerprints = {t.domain.fingerprint for t in current}
        wanted = {_hashed("gs_b_", f) for f in fingerprints}
        wanted |= {_hashed("gs_t_", t.key) for t in current if t.patch}
        pools = {_hashed("", f) for f in fingerprints}
        with self.engine.connect() as conn:
            built = conn.scalars(text("SELECT nspname FROM pg_namespace WHERE nspname ~ '^gs_[bt]_'")).all()
            query = (
                "SELECT schema, pool, episode_id, "
                "coalesce(extract(epoch FROM now() - claimed_at) / 3600, 'Infinity'::numeric) "
                f"FROM {_REGISTRY} ORDER BY uses, schema"
            )
            slots = conn.execute(text(query)).all()
        free: dict[str, list[str]] = {}
        report = PruneReport()
        for schema, pool, episode_id, hours in slots:
            if episode_id is None:
                free.setdefault(pool, []).append(schema)
            elif held_hours is not None and hours > held_hours:
                report.orphaned_slots.append(schema)
            else:
                report.held_slots += 1
        report.stale_schemas = sorted(set(built) - wanted)
        for pool, schemas in free.items():
            report.surplus_slots += schemas[keep_free:] if pool in pools else schemas
            report.kept_slots += len(schemas[:keep_free]) if pool in pools else 0
        if not dry_run:
            self._drop(report)
        return report

    def _drop(self, report: PruneReport) -> None:
        """Drop what `report` lists, one schema per transaction (a schema holds many lockable objects)."""
        for schema in report.stale_schemas:
            with self.engine.begin() as conn:
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": schema})
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        for schema in report.orphaned_slots:
            with self.engine.begin() as conn:
                conn.execute(text(f"DELETE FROM {_REGISTRY} WHERE schema = :s"), {"s": schema})
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        for schema in list(report.surplus_slots):
            with self.engine.begin() as conn:
                freed = conn.scalar(
                    text(
                        f"DELETE FROM {_REGISTRY} WHERE schema = :s AND episode_id IS NULL RETURNING schema"
                    ),
                    {"s": schema},
                )
                if freed:  # not claimed in the meantime
                    conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                else:
                    report.surplus_slots.remove(schema)
        with self._lock:
            self._ready -= set(report.stale_schemas)

    def close(self) -> None:
        """Finish pending maintenance, then close pooled connections."""
        self._maintenance.shutdown(wait=True)
        self.engine.dispose()
