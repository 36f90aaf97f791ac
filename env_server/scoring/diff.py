"""State diffs: what a trajectory changed, and how that differs from what it should have changed.

Both the agent's outcome and the expected outcome are diffs against the task's initial state. Updated rows
compare column by column; added rows carry no stable key (generated IDs differ between trajectories) and are
matched by content as a multiset. Each entry names the side its table is on (the agent's, or the customer's
own tables in a dual-control domain).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from env_server.sandbox.snapshot import ChangedRows, Key, Row, Snapshot
from shared.models import DiffEntry, Side, StateChange

NEW_ROW = "(new row)"


@dataclass
class TableChanges:
    """The changes to one table."""

    updated: dict[Key, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    removed: dict[Key, Row] = field(default_factory=dict)
    added: list[Row] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.updated or self.removed or self.added)


StateChanges = dict[str, TableChanges]


def changes(initial: Snapshot, changed: ChangedRows, volatile: Mapping[str, frozenset[str]]) -> StateChanges:
    """What the `changed` rows change relative to `initial`, ignoring volatile columns."""
    result: StateChanges = {}
    for table, rows in changed.items():
        before_rows = initial.tables.get(table)
        if before_rows is None:
            continue
        ignored = volatile.get(table, frozenset())
        diff = TableChanges()
        for key in sorted(rows, key=str):
            before, after = before_rows.get(key), rows[key]
            if before is None and after is not None:
                diff.added.append(_strip(after, ignored))
            elif before is not None and after is None:
                diff.removed[key] = _strip(before, ignored)
            elif before is not None and after is not None:
                cols = {
                    c: (before[c], after[c]) for c in before if c not in ignored and before[c] != after[c]
                }
                if cols:
                    diff.updated[key] = cols
        if diff:
            result[table] = diff
    return result


def _strip(row: Row, ignored: frozenset[str]) -> Row:
    return {c: v for c, v in row.items() if c not in ignored}


def without_columns(state: StateChanges, columns: Iterable[str]) -> StateChanges:
    """`state` with the given "table.column" entries left out (a task's `ignore_columns`).

    An updated row whose only changes were in those columns no longer counts as updated.
    """
    by_table: dict[str, set[str]] = {}
    for entry in columns:
        table, _, column = entry.partition(".")
        by_table.setdefault(table, set()).add(column)
    if not by_table:
        return state
    result: StateChanges = {}
    for table, diff in state.items():
        ignored = frozenset(by_table.get(table, ()))
        if not ignored:
            result[table] = diff
            continue
        kept = TableChanges(
            updated={
                k: {c: v for c, v in cols.items() if c not in ignored}
                for k, cols in diff.updated.items()
                if set(cols) - ignored
            },
            removed={k: _strip(r, ignored) for k, r in diff.removed.items()},
            added=[_strip(r, ignored) for r in diff.added],
        )
        if kept:
            result[table] = kept
    return result


def listed(state: StateChanges, user_tables: Collection[str] = frozenset()) -> list[StateChange]:
    """The changes one by one, as people read them: per table, updated cells, removed rows, added rows.

    A change to one of `user_tables` (the customer's side) is labelled `side="user"`.
    """
    out: list[StateChange] = []
    for table in sorted(state):
        diff = state[table]
        side: Side = "user" if table in user_tables else "agent"
        for key in sorted(diff.updated, key=key_text):
            for column, (before, after) in sorted(diff.updated[key].items()):
                out.append(
                    StateChange(
                        table=table, key=key_text(key), column=column, before=before, after=after, side=side
                    )
                )
        for key in sorted(diff.removed, key=key_text):
            out.append(StateChange(table=table, key=key_text(key), before=diff.removed[key], side=side))
        out += [StateChange(table=table, key=NEW_ROW, after=row, side=side) for row in diff.added]
    return out


def compare(
    expected: StateChanges, actual: StateChanges, user_tables: Collection[str] = frozenset()
) -> list[DiffEntry]:
    """Every way `actual` departs from `expected`; empty iff they are equal.

    An entry on one of `user_tables` (the customer's side) is labelled `side="user"`.
    """
    entries: list[DiffEntry] = []
    for table in sorted(set(expected) | set(actual)):
        exp, act = expected.get(table, TableChanges()), actual.get(table, TableChanges())
        found = _compare_updated(table, exp, act)
        found += _compare_removed(table, exp, act)
        found += _compare_added(table, exp.added, act.added)
        if table in user_tables:
            found = [e.model_copy(update={"side": "user"}) for e in found]
        entries += found
    return entries


def key_text(key: Key) -> str:
    """A row key as text: its parts joined by slashes (`BK-20417`, `RT-04-STD/2026-10-14`)."""
    return "/".join(str(k) for k in key)


def _compare_updated(table: str, exp: TableChanges, act: TableChanges) -> list[DiffEntry]:
    entries = []
    for key in sorted(set(exp.updated) | set(act.updated), key=key_text):
        e_cols, a_cols = exp.updated.get(key, {}), act.updated.get(key, {})
        for col in sorted(set(e_cols) | set(a_cols)):
            common: dict[str, Any] = {"table": table, "key": key_text(key), "column": col}
            if col in e_cols and col in a_cols:
                if e_cols[col][1] != a_cols[col][1]:
                    entries.append(
                        DiffEntry(kind="wrong", expected=e_cols[col][1], actual=a_cols[col][1], **common)
                    )
            elif col in e_cols:
                entries.append(
                    DiffEntry(kind="missing", expected=e_cols[col][1], actual=e_cols[col][0], **common)
                )
            else:
                entries.append(
                    DiffEntry(kind="extra", expected=a_cols[col][0], actual=a_cols[col][1], **common)
                )
    return entries


def _compare_removed(table: str, exp: TableChanges, act: TableChanges) -> list[DiffEntry]:
    missing = [
        DiffEntry(kind="missing", table=table, key=key_text(k), expected="(deleted)", actual="(present)")
        for k in sorted(set(exp.removed) - set(act.removed), key=key_text)
    ]
    extra = [
        DiffEntry(kind="extra", table=table, key=key_text(k), expected="(present)", actual="(deleted)")
        for k in sorted(set(act.removed) - set(exp.removed), key=key_text)
    ]
    return missing + extra


def _compare_added(table: str, expected: list[Row], actual: list[Row]) -> list[DiffEntry]:
    """Match added rows by content; pair leftovers by similarity so a near-miss reads as `wrong` columns."""
    _, leftovers, unmatched_actual = _pair_added(expected, actual)
    entries = []
    for e, a in leftovers:
        row = expected[e]
        if a is None:
            entries.append(DiffEntry(kind="missing", table=table, key=NEW_ROW, expected=row, actual=None))
            continue
        best = actual[a]
        for col in sorted(set(row) | set(best)):
            if row.get(col) != best.get(col):
                entries.append(
                    DiffEntry(
                        kind="wrong",
                        table=table,
                        key=NEW_ROW,
                        column=col,
                        expected=row.get(col),
                        actual=best.get(col),
                    )
                )
    entries += [
        DiffEntry(kind="extra", table=table, key=NEW_ROW, expected=None, actual=actual[a])
        for a in unmatched_actual
    ]
    return entries


def match_added(expected: list[Row], actual: list[Row]) -> list[Literal["needed", "wrong", "collateral"]]:
    """How each actual added row stands against the expected ones, exactly as `compare` pairs them.

    `needed`: equal to an expected row; `wrong`: paired with an expected row as a near miss; `collateral`:
    no expected row for it.
    """
    exact, leftovers, _ = _pair_added(expected, actual)
    labels: list[Literal["needed", "wrong", "collateral"]] = ["collateral"] * len(actual)
    for _, a in exact:
        labels[a] = "needed"
    for _, near in leftovers:
        if near is not None:
            labels[near] = "wrong"
    return labels


def _pair_added(
    expected: list[Row], actual: list[Row]
) -> tuple[list[tuple[int, int]], list[tuple[int, int | None]], list[int]]:
    """Exact pairs; each other expected row with its near miss or None (missing); the unpaired actual rows.

    Indices into `expected` and `actual`. An expected row takes the first equal actual row; then each
    leftover expected row, in order, takes its most similar free actual row if they share at least half
    its values (a near miss, read as `wrong` columns).
    """
    free = list(range(len(actual)))
    exact: list[tuple[int, int]] = []
    unpaired: list[int] = []
    for e, row in enumerate(expected):
        canon = _canonical(row)
        hit = next((a for a in free if _canonical(actual[a]) == canon), None)
        if hit is None:
            unpaired.append(e)
        else:
            free.remove(hit)
            exact.append((e, hit))
    leftovers: list[tuple[int, int | None]] = []
    for e in unpaired:
        row = expected[e]
        best = max(free, key=lambda a: _shared_values(row, actual[a]), default=None)
        if best is not None and _shared_values(row, actual[best]) * 2 >= len(row):
            free.remove(best)
            leftovers.append((e, best))
        else:
            leftovers.append((e, None))
    return exact, leftovers, free


def _canonical(row: Row) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _shared_values(a: Row, b: Row) -> int:
    return sum(1 for c, v in a.items() if c in b and b[c] == v)


def changes_as_entries(changes_: StateChanges) -> list[DiffEntry]:
    """A diff against "no change expected": every change reads as `extra`."""
    return compare({}, changes_)
