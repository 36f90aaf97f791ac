"""The slot pool: schemas episodes claim and free, recorded in `public.gs_sandbox_slots`.

A slot is a schema with a domain's tables and change-log triggers. Starting an episode claims a free slot of
its domain's pool (or creates one) and refills it from the task's template; disposing of the episode frees
it. Every name lives in the database, so any worker can serve any request of any episode. Every few uses a
slot's tables are vacuumed, off the request path.
"""

from __future__ import annotations

import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from sqlalchemy import Engine, text

from env_server.sandbox.postgres.naming import REGISTRY, slot_pool
from env_server.sandbox.postgres.schemas import SchemaBuilder, slot_tables
from env_server.sandbox.template import Template

logger = logging.getLogger(__name__)

#: A slot's tables are vacuumed after this many uses, so refills stay fast even where autovacuum is off.
VACUUM_EVERY = 16
#: The slot registry is vacuumed after this many releases by one process.
REGISTRY_VACUUM_EVERY = 128


class HeldSlot(NamedTuple):
    """The slot an episode holds and the pool (domain version) it was claimed from."""

    schema: str
    pool: str


class SlotPool:
    """Claims, finds and frees slots; vacuums them in a background thread."""

    def __init__(self, engine: Engine, schemas: SchemaBuilder) -> None:
        self.engine = engine
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
        with self._lock:
            self._registry_ready = True

    def claim(self, sandbox_id: str, template: Template) -> str:
        """A slot for episode `sandbox_id` (a free one of the domain's pool, or a new one), refilled."""
        source = self.schemas.template(template)
        self.ensure_registry()
        with self.engine.begin() as conn:
            schema = conn.scalar(
                text(
                    f"UPDATE {REGISTRY} SET episode_id = :e, claimed_at = now() "
                    f"WHERE schema = (SELECT schema FROM {REGISTRY} "
                    "WHERE pool = :p AND episode_id IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING schema"
                ),
                {"e": sandbox_id, "p": slot_pool(template.domain)},
            )
            if schema is None:
                schema = f"gs_s_{uuid.uuid4().hex}"
                conn.exec_driver_sql(self.schemas.slot_script(template.domain, schema))
                conn.execute(
                    text(
                        f"INSERT INTO {REGISTRY} (schema, pool, episode_id, claimed_at) "
                        "VALUES (:s, :p, :e, now())"
                    ),
                    {"s": schema, "p": slot_pool(template.domain), "e": sandbox_id},
                )
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
