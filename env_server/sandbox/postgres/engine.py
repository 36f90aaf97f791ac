"""PostgreSQL sandboxes: each episode gets a pooled schema, refilled from its task's template schema.

A domain's seed is built once into a base schema; a task's template schema is the base's rows plus the task's
patch (`schemas`). Episode sandboxes are *slots* (`slots`): starting an episode claims a free slot (or creates
one) and refills it from the template — a `DELETE` and an `INSERT ... SELECT` per table, in one round trip,
with triggers off; a slot last filled from the same template gets back only the rows its last episode changed,
as its change log names them — so steady-state episode creation issues no DDL, costs what the last episode
changed rather than the seed's size, and the system catalogs do not churn. Every name lives in the database,
so any worker can serve any request of any episode, and a restart loses nothing. Schemas of older domain
versions stay until `groundstate sandboxes prune` drops them (`prune`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import create_engine
from sqlalchemy.exc import ProgrammingError

from env_server.domain import Domain
from env_server.errors import DomainVersionError
from env_server.sandbox.base import SandboxEngine
from env_server.sandbox.postgres import prune
from env_server.sandbox.postgres.naming import base_schema, slot_pool, slot_roles, template_schema
from env_server.sandbox.postgres.prune import PruneReport
from env_server.sandbox.postgres.sandbox import PostgresSandbox
from env_server.sandbox.postgres.schemas import SchemaBuilder
from env_server.sandbox.postgres.slots import SlotPool
from env_server.sandbox.postgres.snapshots import SnapshotCache
from env_server.sandbox.snapshot import ChangedRows, Snapshot
from env_server.sandbox.template import Template

#: SQLSTATEs of a schema or table that is not there (invalid_schema_name, undefined_table).
_MISSING = ("3F000", "42P01")


class PostgresSandboxEngine(SandboxEngine):
    """Pooled schema sandboxes in one PostgreSQL database."""

    backend = "postgresql"
    shared = True

    def __init__(self, url: str, pool_size: int = 8, max_snapshots: int = 256) -> None:
        self.engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size * 2, pool_pre_ping=True)
        self.schemas = SchemaBuilder(self.engine)
        self.slots = SlotPool(self.engine, self.schemas)
        self.snapshots = SnapshotCache(self._read_base, self._read_patch, max_snapshots)

    def create(self, sandbox_id: str, template: Template) -> PostgresSandbox:
        """See `SandboxEngine.create`: claim a free slot of the domain (or add one) and refill it."""
        try:
            return self._sandbox(sandbox_id, template, self.slots.claim(sandbox_id, template))
        except ProgrammingError as exc:
            if getattr(exc.orig, "sqlstate", None) not in _MISSING:
                raise
        # its template was dropped (`prune`) after this process had it ready
        self.schemas.forget({base_schema(template.domain), template_schema(template)})
        return self._sandbox(sandbox_id, template, self.slots.claim(sandbox_id, template))

    def attach(
        self, sandbox_id: str, template: Template, any_version: bool = False
    ) -> PostgresSandbox | None:
        """See `SandboxEngine.attach`: the slot the episode holds, if any.

        During a rolling upgrade replicas of two domain versions share the database. A slot claimed by the
        other version has that version's tables and rows: running this version's tools on it (or scoring it
        against this version's expected state) would be silently wrong, so it is refused as a retriable
        backend error, which a retry may send to a replica of the episode's own version.
        """
        held = self.slots.held(sandbox_id)
        if held is None:
            return None
        if held.pool != slot_pool(template.domain) and not any_version:
            raise DomainVersionError(
                f"episode {sandbox_id} was started on another version of domain '{template.domain.name}' "
                "than this server runs: a server of that version can go on with it; otherwise start a new "
                "episode"
            )
        return self._sandbox(sandbox_id, template, held.schema)

    def initial_snapshot(self, template: Template) -> Snapshot:
        """See `SandboxEngine.initial_snapshot`: the base snapshot, the template's logged patch over it."""
        return self.snapshots.get(template)

    def prune(
        self,
        templates: Iterable[Template],
        keep_free: int = 8,
        held_hours: float | None = None,
        dry_run: bool = False,
    ) -> PruneReport:
        """Drop the schemas no given template can use, and free slots beyond `keep_free` per domain.

        A server that had one of the dropped schemas ready rebuilds it on its next use.

        Args:
            templates: the templates of every task the servers sharing this database serve.
            keep_free: free slots to keep per current domain (they make the next starts cheap).
            held_hours: drop held slots claimed longer ago than this many hours (see `prune.plan_prune`).
            dry_run: report what would be dropped, drop nothing.
        """
        self.slots.ensure_registry()
        report = prune.plan_prune(self.engine, templates, keep_free, held_hours)
        if not dry_run:
            prune.drop(self.engine, report)
            self.schemas.forget(set(report.stale_schemas))
        return report

    def close(self) -> None:
        """Finish pending maintenance, then close pooled connections."""
        self.slots.close()
        self.engine.dispose()

    def _sandbox(self, sandbox_id: str, template: Template, schema: str) -> PostgresSandbox:
        roles = slot_roles(schema, self.slots.database)
        return PostgresSandbox(sandbox_id, template, self.engine, schema, roles, on_dispose=self._release)

    def _release(self, sandbox: PostgresSandbox) -> None:
        self.slots.release(sandbox.sandbox_id, sandbox.template, sandbox.schema)

    def _read_base(self, domain: Domain) -> Snapshot:
        return PostgresSandbox("base", Template(domain), self.engine, self.schemas.base(domain)).snapshot()

    def _read_patch(self, template: Template) -> ChangedRows:
        reader = PostgresSandbox("template", template, self.engine, self.schemas.template(template))
        return reader.changed_rows()
