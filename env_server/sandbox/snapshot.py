"""A sandbox's state as plain values: the input of every diff.

Values are normalised so both backends give identical snapshots (dates as ISO strings, floats rounded), and
generated IDs (`BK-90001`) are replaced by a placeholder (`<new:BK>`) wherever they appear, so that rows two
trajectories created in a different order still compare equal by content.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, select

from env_server.domain import FIRST_GENERATED_ID, Domain
from env_server.sandbox.changelog import changed_keys, read_rows

Row = dict[str, Any]
Key = tuple[Any, ...]
IdMatcher = Callable[[str], str | None]
#: The rows a trajectory touched, per table: the current row, or None if it was deleted.
ChangedRows = dict[str, dict[Key, Row | None]]


@dataclass(frozen=True)
class Snapshot:
    """Rows per table, keyed by primary key; tables the domain marks wholly volatile are left out."""

    tables: dict[str, dict[Key, Row]]

    def overlay(self, changed: ChangedRows) -> Snapshot:
        """This snapshot with `changed` applied (copies only the tables that changed)."""
        tables = dict(self.tables)
        for name, rows in changed.items():
            if name not in tables:
                continue
            table = tables[name] = dict(tables[name])
            for key, row in rows.items():
                if row is None:
                    table.pop(key, None)
                else:
                    table[key] = row
        return Snapshot(tables=tables)


def generated_id_matcher(counters: dict[str, int]) -> IdMatcher:
    """A function telling whether a string is an ID this sandbox generated, and if so its prefix.

    An ID is generated iff it reads `PREFIX-N` with `FIRST_GENERATED_ID <= N < next` for that prefix, so a
    seeded `BK-10417` is never mistaken for one.
    """

    def match(value: str) -> str | None:
        prefix, sep, number = value.rpartition("-")
        if not sep or prefix not in counters or not number.isdigit():
            return None
        return prefix if FIRST_GENERATED_ID <= int(number) < counters[prefix] else None

    return match


def normalise(value: Any, is_generated: IdMatcher) -> Any:
    """One cell as a JSON-ready, backend-independent value."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat(timespec="seconds")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, str):
        prefix = is_generated(value)
        if prefix is not None:
            return f"<new:{prefix}>"
    return value


def read_changed(conn: Connection, domain: Domain, counters: dict[str, int]) -> ChangedRows:
    """The rows the change log names, as they are now (cost grows with the changes, not the tables)."""
    is_generated = generated_id_matcher(counters)
    changed: ChangedRows = {}
    for name, keys in changed_keys(conn, domain).items():
        if "*" in domain.volatile_columns.get(name, ()):
            continue
        table = domain.metadata.tables[name]
        pk_names = [c.name for c in table.primary_key.columns]
        rows: dict[Key, Row | None] = dict.fromkeys(keys)
        for record in read_rows(conn, table, keys):
            rows[tuple(record[n] for n in pk_names)] = {
                column: normalise(value, is_generated) for column, value in record.items()
            }
        changed[name] = rows
    return changed


def read_snapshot(conn: Connection, domain: Domain, counters: dict[str, int]) -> Snapshot:
    """Read every compared table of `domain` through `conn`."""
    is_generated = generated_id_matcher(counters)
    tables: dict[str, dict[Key, Row]] = {}
    for table in domain.metadata.sorted_tables:
        if "*" in domain.volatile_columns.get(table.name, ()):
            continue
        pk_names = [c.name for c in table.primary_key.columns]
        rows: dict[Key, Row] = {}
        for record in conn.execute(select(table)).mappings():
            rows[tuple(record[n] for n in pk_names)] = {
                name: normalise(value, is_generated) for name, value in record.items()
            }
        tables[table.name] = rows
    return Snapshot(tables=tables)
