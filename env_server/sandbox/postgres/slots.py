"""The slot pool: schemas episodes claim and free, recorded in `public.gs_sandbox_slots`.

A slot is a schema with a domain's tables and change-log triggers. Starting an episode claims a free slot of
its domain's pool (or creates one) and refills it from the task's template (or, when the slot last held the
same template, restores only the rows its last episode changed); disposing of the episode frees it. Every name
lives in the database, so any worker can serve any request of any episode. Every few uses a slot's tables are
vacuumed, off the request path.
"""

from __future__ import annotations

import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from sqlalchemy import Engine, text

from env_server.sandbox.postgres import roles
from env_server.sandbox.postgres.naming import REGISTRY, slot_pool, slot_roles
from env_server.sandbox.postgres.schemas import SchemaBuilder, slot_tables
from env_server.sandbox.template import Template

logger = logging.getLogger(__name__)

#: A slot's tables are vacuumed after this many uses, so refills stay fast even where autovacuum is off.
VACUUM_EVERY = 16
#: The slot registry is vacuumed after this many releases by one process.
REGISTRY_VACUUM_EVERY = 128


#: Claim a free slot of pool `:p` for episode `:e`, one last filled from template `:src` first; returns its
#: schema and the template it holds. One UPDATE around the locking subquery, so the statement takes the
#: registry's row-exclusive lock before the subquery's weaker one (the other order can deadlock).
_CLAIM = text(
    f"UPDATE {REGISTRY} SET episode_id = :e, claimed_at = now() WHERE schema = (SELECT schema FROM "
    f"{REGISTRY} WHERE pool = :p AND episode_id IS NULL ORDER BY filled_from IS NOT DISTINCT FROM :src "
    "DESC LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING schema, filled_from"
)
_FILLED = text(f"UPDATE {REGISTRY} SET filled_from = :src WHERE schema = :s")
#: Whether the registry exists with every column the current code uses.
_REGISTRY_COMPLETE = text(
    "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{}' "
    "AND table_name = '{}' AND column_name = 'filled_from')".format(*REGISTRY.split("."))
)
_REGISTER = text(
    f"INSERT INTO {REGISTRY} (schema, pool, episode_id, claimed_at, filled_from) "
    "VALUES (:s, :p, :e, now(), :src)"
)


class HeldSlot(NamedTuple):
    """The slot an episode holds and the pool (domain version) it was claimed from."""

    schema: str
    pool: str


class SlotPool:
    """Claims, finds and frees slots; vacuums them in a background thread."""

    def __init__(self, engine: Engine, schemas: SchemaBuilder) -> None:
        self.engine = engine
        #: The database's name, which slot roles carry (roles are global to the cluster).
        self.database = str(engine.url.database or "postgres")
        self.schemas = schemas
        self._maintenance = ThreadPoolExecutor(1, thread_name_prefix="gs-vacuum")
        self._registry_ready = False
        self._releases = 0
        self._lock = threading.Lock()

    def ensure_registry(self) -> None:
        """Create the slot registry if this database has none yet."""
        if self._registry_ready:
            return
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('gs_sandboxes'))"))
            roles.harden(conn, self.database)
            # complete already: no DDL, whose ACCESS EXCLUSIVE lock would queue (and deadlock) other
            # workers' claims behind it
            if conn.scalar(_REGISTRY_COMPLETE):
                with self._lock:
                    self._registry_ready = True
                return
            conn.exec_driver_sql(
                f"CREATE TABLE IF NOT EXISTS {REGISTRY} (schema text PRIMARY KEY, pool text NOT NULL, "
                "episode_id text UNIQUE, uses integer NOT NULL DEFAULT 0)"
            )
            conn.exec_driver_sql(
                f"CREATE INDEX IF NOT EXISTS gs_sandbox_slots_free ON {REGISTRY} (pool) "
                "WHERE episode_id IS NULL"
            )
            # When the holder claimed it: lets `prune` drop slots whose episode was never disposed of.
            conn.exec_driver_sql(f"ALTER TABLE {REGISTRY} ADD COLUMN IF NOT EXISTS claimed_at timestamptz")
            # The template schema the slot was last filled from: its next episode of that template only
            # needs the rows the last one changed put back (`SchemaBuilder.restore_script`).
            conn.exec_driver_sql(f"ALTER TABLE {REGISTRY} ADD COLUMN IF NOT EXISTS filled_from text")
        with self._lock:
            self._registry_ready = True

    def claim(self, sandbox_id: str, template: Template) -> str:
        """A slot for episode `sandbox_id` (a free one of the domain's pool, or a new one), refilled.

        A free slot last filled from the same template is preferred: it is restored by putting back only
        the rows its last episode changed. Any other slot is refilled whole.
        """
        source = self.schemas.template(template)
        self.ensure_registry()
        pool = slot_pool(template.domain)
        with self.engine.begin() as conn:
            row = conn.execute(_CLAIM, {"e": sandbox_id, "p": pool, "src": source}).first()
            if row is None:
                schema = f"gs_s_{uuid.uuid4().hex}"
                conn.exec_driver_sql(self.schemas.slot_script(template.domain, schema))
                rw, ro = slot_roles(schema, self.database)
                domain_tables = list(template.domain.metadata.sorted_tables)
                conn.exec_driver_sql(roles.roles_script(schema, rw, ro, domain_tables))
                conn.execute(_REGISTER, {"s": schema, "p": pool, "e": sandbox_id, "src": source})
            elif row.filled_from == source:
                schema = row.schema
                changed = set(conn.scalars(text(f'SELECT DISTINCT table_name FROM "{schema}"._gs_changes')))
                conn.exec_driver_sql(self.schemas.restore_script(template.domain, schema, source, changed))
                return str(schema)
            else:
                schema = row.schema
                conn.execute(_FILLED, {"src": source, "s": schema})
            conn.exec_driver_sql(self.schemas.fill_script(template.domain, schema, source))
        return str(schema)

    def held(self, sandbox_id: str) -> HeldSlot | None:
        """The slot episode `sandbox_id` holds, if any."""
        self.ensure_registry()
        with self.engine.connect() as conn:
            row = conn.execute(
                text(f"SELECT schema, pool FROM {REGISTRY} WHERE episode_id = :e"), {"e": sandbox_id}
            ).first()
        return None if row is None else HeldSlot(str(row.schema), str(row.pool))

    def release(self, sandbox_id: str, template: Template, schema: str) -> None:
        """Free the episode's slot for the next episode (its rows are replaced on the next claim)."""
        with self.engine.begin() as conn:
            uses = conn.scalar(
                text(
                    f"UPDATE {REGISTRY} SET episode_id = NULL, uses = uses + 1 "
                    "WHERE episode_id = :e RETURNING uses"
                ),
                {"e": sandbox_id},
            )
        if uses and uses % VACUUM_EVERY == 0:  # off the request path: a VACUUM takes tens of milliseconds
            tables = slot_tables(template.domain)
            self._maintenance.submit(self._vacuum, [f'VACUUM "{schema}"."{t.name}"' for t in tables])
        with self._lock:
            self._releases += 1
            registry_due = self._releases % REGISTRY_VACUUM_EVERY == 0
        if registry_due:  # every claim and release updates a registry row
            self._maintenance.submit(self._vacuum, [f"VACUUM {REGISTRY}"])

    def _vacuum(self, statements: list[str]) -> None:
        """Run VACUUM statements; a failure only delays the next vacuum, so it is logged, not raised."""
        try:
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                for statement in statements:
                    conn.exec_driver_sql(statement)
        except Exception:
            logger.exception("%s failed", statements[0])

    def close(self) -> None:
        """Finish pending maintenance."""
        self._maintenance.shutdown(wait=True)
