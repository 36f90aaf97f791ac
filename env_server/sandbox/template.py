"""What a sandbox starts from: a domain's seed plus a task's `initial_patch`; built once, copied often."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Table, insert, update
from sqlalchemy.orm import Session

from env_server.domain import Domain
from env_server.errors import TaskInvalidError
from env_server.sandbox.bookkeeping import internal_metadata
from env_server.sandbox.changelog import changes_table  # noqa: F401 - registers the change-log table
from env_server.sandbox.values import python_value
from shared.tasks import Task

Patch = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class Template:
    """A domain plus the rows a task adds on top of its seed; `key` names its cached copy."""

    domain: Domain
    patch: Patch = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Stable across processes and backends; changes when the schema, seed code or patch change."""
        body = json.dumps(self.patch, sort_keys=True, default=str).encode()
        return f"{self.domain.name}_{self.domain.fingerprint}_{hashlib.sha256(body).hexdigest()[:12]}"


def template_of(task: Task, domain: Domain) -> Template:
    """The template a task's sandboxes start from."""
    return Template(domain=domain, patch=task.initial_patch)


def create_tables(conn: Connection, domain: Domain) -> None:
    """Create the domain's tables and the sandbox's own bookkeeping tables (ID counters, change log)."""
    domain.metadata.create_all(conn)
    internal_metadata.create_all(conn)


def seed(conn: Connection, domain: Domain) -> None:
    """Fill the (empty, created) tables deterministically with the domain's seed."""
    with Session(bind=conn, autoflush=False) as session:
        domain.seed(session, random.Random(domain.seed_value))
        session.flush()


def apply_patch(conn: Connection, domain: Domain, patch: Patch) -> None:
    """Insert each row, or overwrite the given columns of the row with the same primary key."""
    tables = domain.metadata.tables
    unknown = sorted(set(patch) - set(tables))
    if unknown:
        raise TaskInvalidError(f"initial_patch names unknown tables {unknown}", field="initial_patch")
    for table in domain.metadata.sorted_tables:
        for i, raw in enumerate(patch.get(table.name, [])):
            row = _coerce_row(table, raw, where=f"initial_patch.{table.name}.{i}")
            pk = {c.name: row[c.name] for c in table.primary_key.columns if c.name in row}
            if len(pk) != len(table.primary_key.columns):
                raise TaskInvalidError(
                    f"initial_patch.{table.name}[{i}] lacks its primary key",
                    field=f"initial_patch.{table.name}",
                )
            condition = [table.c[name] == value for name, value in pk.items()]
            if conn.execute(update(table).where(*condition).values(**row)).rowcount == 0:
                conn.execute(insert(table).values(**row))


def _coerce_row(table: Table, raw: dict[str, Any], *, where: str) -> dict[str, Any]:
    """Turn YAML values into column values (ISO strings into dates), naming any unknown column."""
    row: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in table.c:
            raise TaskInvalidError(f"{where}: table {table.name} has no column '{name}'", field=where)
        row[name] = python_value(table.c[name].type, value)
    return row
