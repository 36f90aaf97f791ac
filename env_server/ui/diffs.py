"""State diffs arranged for reading: per table, per column, by kind of difference.

Two shapes reach the pages. A scored or live episode has `DiffEntry` items (missing, wrong, extra against the
expected changes); a task has its expected changes themselves (`StateChanges`: rows updated column by
column, added and removed), shown as a table diff of the task's initial state.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from env_server.scoring.diff import StateChanges, key_text
from shared.models import DiffEntry

KINDS = ("missing", "wrong", "extra")


@dataclass
class TableDiff:
    """The differences in one table, with a count per column and kind for the summary grid."""

    table: str
    entries: list[DiffEntry] = field(default_factory=list)
    by_column: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def counts(self) -> Counter[str]:
        """Entries per kind in this table."""
        return Counter(e.kind for e in self.entries)


def group_diff(entries: list[DiffEntry]) -> list[TableDiff]:
    """The entries grouped by table (in table order), each with its column × kind counts.

    A whole-row entry (a missing or extra row, no column) counts under `(row)`.
    """
    tables: dict[str, TableDiff] = {}
    for entry in sorted(entries, key=lambda e: e.table):
        group = tables.setdefault(entry.table, TableDiff(entry.table))
        group.entries.append(entry)
        group.by_column.setdefault(entry.column or "(row)", Counter())[entry.kind] += 1
    return list(tables.values())


@dataclass
class UpdatedRow:
    """One row the gold actions update: each changed column with its value before and after."""

    key: str
    columns: list[tuple[str, Any, Any]]


@dataclass
class ExpectedTable:
    """What the gold actions change in one table."""

    table: str
    updated: list[UpdatedRow]
    added_columns: list[str]
    added: list[list[Any]]
    removed: list[tuple[str, dict[str, Any]]]


def expected_tables(changes: StateChanges) -> list[ExpectedTable]:
    """The expected changes per table, in table order, ready for a before/after table."""
    tables = []
    for name in sorted(changes):
        change = changes[name]
        columns = sorted({c for row in change.added for c in row})
        tables.append(
            ExpectedTable(
                table=name,
                updated=[
                    UpdatedRow(key_text(key), [(c, old, new) for c, (old, new) in sorted(cols.items())])
                    for key, cols in sorted(change.updated.items(), key=lambda item: key_text(item[0]))
                ],
                added_columns=columns,
                added=[[row.get(c) for c in columns] for row in change.added],
                removed=[
                    (key_text(k), row)
                    for k, row in sorted(change.removed.items(), key=lambda i: key_text(i[0]))
                ],
            )
        )
    return tables
