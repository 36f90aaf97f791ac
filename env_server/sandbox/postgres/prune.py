"""Pruning: drop the schemas older domain versions left behind, surplus free slots and orphaned slots.

Base and template schemas are named after a hash of the domain's code and the task's patch, and slot pools
after the domain's fingerprint, so every change of a domain leaves its older schemas behind until
`groundstate sandboxes prune` drops them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import Engine, text

from env_server.sandbox.postgres.naming import REGISTRY, base_schema, slot_pool, slot_roles, template_schema
from env_server.sandbox.postgres.roles import drop_roles
from env_server.sandbox.template import Template


@dataclass
class PruneReport:
    """What `prune` dropped (or would drop)."""

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


def plan_prune(
    engine: Engine, templates: Iterable[Template], keep_free: int, held_hours: float | None
) -> PruneReport:
    """What to drop: schemas no given template maps to, and free (or, past `held_hours`, held) slots.

    This lists base and template schemas that none of `templates` (every task a server serves) maps to,
    every free slot of a pool no current domain owns, and the free slots of current pools beyond the
    `keep_free` least used ones. A slot an episode holds stays, unless `held_hours` is given and it was
    claimed longer ago than that (or before claim times were kept): such a slot belongs to an episode
    nobody scored or disposed of (a worker's eviction never frees a slot).
    """
    current = list(templates)
    domains = {t.domain.fingerprint: t.domain for t in current}
    wanted = {base_schema(d) for d in domains.values()}
    wanted |= {template_schema(t) for t in current if t.patch}
    pools = {slot_pool(d) for d in domains.values()}
    with engine.connect() as conn:
        built = conn.scalars(text("SELECT nspname FROM pg_namespace WHERE nspname ~ '^gs_[bt]_'")).all()
        query = (
            "SELECT schema, pool, episode_id, "
            "coalesce(extract(epoch FROM now() - claimed_at) / 3600, 'Infinity'::numeric) "
            f"FROM {REGISTRY} ORDER BY uses, schema"
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
    return report


def drop(engine: Engine, report: PruneReport) -> None:
    """Drop what `report` lists, one schema per transaction (a schema holds many lockable objects).

    A surplus slot claimed since the report was made stays, and leaves the report.
    """
    for schema in report.stale_schemas:
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": schema})
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    database = str(engine.url.database or "postgres")
    for schema in report.orphaned_slots:
        with engine.begin() as conn:
            conn.execute(text(f"DELETE FROM {REGISTRY} WHERE schema = :s"), {"s": schema})
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            drop_roles(conn, slot_roles(schema, database))
    for schema in list(report.surplus_slots):
        with engine.begin() as conn:
            freed = conn.scalar(
                text(f"DELETE FROM {REGISTRY} WHERE schema = :s AND episode_id IS NULL RETURNING schema"),
                {"s": schema},
            )
            if freed:  # not claimed in the meantime
                conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                drop_roles(conn, slot_roles(schema, database))
            else:
                report.surplus_slots.remove(schema)
