"""Per-call credit: which tool call made which change, and how each change relates to the expected outcome.

A binary reward says *that* an episode failed; credit says *where*. The episode's write calls are replayed on
a fresh sandbox of the task, and after each one the rows the change log names are read again: the rows that
differ from before the call are that call's changes. Each change gets a label:

- `needed`: part of the expected outcome, with the expected value;
- `wrong`: the right row or column, another value (an updated column, or a new row that is a near miss of
  an expected one, as the state diff pairs them);
- `collateral`: a change the task does not want (an extra update, a removal, a new row);
- `undone`: overwritten by a later call (or put back to the initial value), so it is not in the outcome.

A call's label is the worst of its changes' (wrong, collateral, needed, undone), or `no-effect` for a call
that changed nothing (a read, a refused call, a write that wrote the same values).

The first decisive deviation is the first call after which the expected outcome could no longer be reached
without undoing something the agent never undid: of the changes still wrong or collateral at the end, the
call that last put each off course (and it stayed off). An episode with none that still failed stopped early
(the first missing change) or failed another check (the first failed one: consent names the write that came
before the yes, an analytics answer names the last `submit_answer`).

Credit is a diagnostic: it never changes the reward. It costs one sandbox and the episode's write calls,
and each read after a call touches only the rows the episode has changed so far, never whole tables.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.sandbox.snapshot import ChangedRows, Key, Row, Snapshot
from env_server.scoring.diff import StateChanges, TableChanges, key_text, match_added
from shared.models import (
    CallCredit,
    ChangeLabel,
    Check,
    Credit,
    CreditLabel,
    Deviation,
    DiffEntry,
    RowChange,
)

#: A change's labels from worst to best: a call takes the worst of its changes'.
_ORDER: tuple[ChangeLabel, ...] = ("wrong", "collateral", "needed", "undone")


@dataclass(frozen=True)
class CallEffect:
    """What one replayed call changed: each touched row before and after it (None: absent)."""

    before: ChangedRows = field(default_factory=dict)
    after: ChangedRows = field(default_factory=dict)


def effect_between(previous: ChangedRows, now: ChangedRows, initial: Snapshot) -> CallEffect:
    """The rows that differ between two reads of the change log (`previous` before a call, `now` after).

    A row not in `previous` was untouched before the call: its before is the initial row (or absent).
    """
    before: ChangedRows = {}
    after: ChangedRows = {}
    for table, rows in now.items():
        seen, start = previous.get(table, {}), initial.tables.get(table, {})
        for key, row in rows.items():
            old = seen[key] if key in seen else start.get(key)
            if old != row:
                before.setdefault(table, {})[key] = old
                after.setdefault(table, {})[key] = row
    return CallEffect(before, after)


@dataclass(frozen=True)
class _Item:
    """One unit of credit: a column of a row (updates), or a whole row (added, removed)."""

    table: str
    key: Key
    column: str | None


@dataclass
class _Change:
    call: int
    item: _Item
    op: str
    before: Any
    after: Any


def assign_credit(
    names: Sequence[str],
    effects: Sequence[CallEffect | None],
    *,
    initial: Snapshot,
    final: ChangedRows,
    expected: StateChanges,
    ignored: Mapping[str, frozenset[str]],
    reward: int | None,
    diff: Sequence[DiffEntry],
    checks: Sequence[Check],
    consent_call: int | None = None,
    answer_call: int | None = None,
) -> Credit:
    """Label every call's changes and find the first decisive deviation.

    Args:
        names: The tool name of every call of the episode, in order (reads and refused calls included).
        effects: What each call changed, None for a call that was not replayed (a read, a refusal).
        initial: The task's initial state.
        final: Every row the episode changed, as it ended (the last read of the change log).
        expected: The gold's changes, without the task's ignored columns.
        ignored: Per table, the columns no comparison looks at (volatile plus the task's ignored ones).
        reward: The episode's reward; a success has no deviation.
        diff: The score's state diff (its first `missing` entry is where an early stop went wrong).
        checks: The score's checks, in order.
        consent_call: The call that changed the state before the user's yes, if any.
        answer_call: The last `submit_answer` call, if any.
    """
    changes = _changes(effects, ignored)
    status = _final_status(initial, final, expected, ignored)
    later: dict[_Item, int] = {}  # the last call touching each item (a row's removal touches its columns)
    row_last: dict[tuple[str, Key], int] = {}
    for change in changes:
        later[change.item] = change.call
        if change.op != "updated":
            row_last[(change.item.table, change.item.key)] = change.call
    per_call: dict[int, list[RowChange]] = defaultdict(list)
    for change in changes:
        item = change.item
        row_touched_after = row_last.get((item.table, item.key), -1) > change.call
        if later[item] > change.call or (change.op == "updated" and row_touched_after):
            label: ChangeLabel = "undone"
        else:
            label = status.get(item) or status.get(_Item(item.table, item.key, None)) or "undone"
        per_call[change.call].append(
            RowChange(
                table=item.table,
                key=key_text(item.key),
                op=change.op,  # type: ignore[arg-type]  # one of the three ops, set in _changes
                column=item.column,
                before=change.before,
                after=change.after,
                label=label,
            )
        )
    calls = [
        CallCredit(index=i, name=name, label=_worst(per_call.get(i, [])), changes=per_call.get(i, []))
        for i, name in enumerate(names)
    ]
    deviation = (
        None
        if reward == 1
        else _first_deviation(
            changes, status, expected, initial, ignored, diff, checks, consent_call, answer_call
        )
    )
    return Credit(calls=calls, first_deviation=deviation)


def _worst(changes: Sequence[RowChange]) -> CreditLabel:
    labels = {c.label for c in changes}
    return next((label for label in _ORDER if label in labels), "no-effect")


def _strip(row: Row | None, ignored: frozenset[str]) -> Row | None:
    return None if row is None else {c: v for c, v in row.items() if c not in ignored}


def _changes(effects: Sequence[CallEffect | None], ignored: Mapping[str, frozenset[str]]) -> list[_Change]:
    """Every call's changes, in call order: whole rows added or removed, columns updated."""
    found: list[_Change] = []
    for i, effect in enumerate(effects):
        if effect is None:
            continue
        for table in sorted(effect.after):
            skip = ignored.get(table, frozenset())
            for key in sorted(effect.after[table], key=str):
                before = _strip(effect.before[table][key], skip)
                after = _strip(effect.after[table][key], skip)
                if before is None and after is not None:
                    found.append(_Change(i, _Item(table, key, None), "added", None, after))
                elif before is not None and after is None:
                    found.append(_Change(i, _Item(table, key, None), "removed", before, None))
                elif before is not None and after is not None:
                    found += [
                        _Change(i, _Item(table, key, c), "updated", before[c], after.get(c))
                        for c in sorted(before)
                        if before[c] != after.get(c)
                    ]
    return found


def _final_status(
    initial: Snapshot, final: ChangedRows, expected: StateChanges, ignored: Mapping[str, frozenset[str]]
) -> dict[_Item, ChangeLabel]:
    """How each changed item stands at the end: needed, wrong, collateral, or undone (back where it began)."""
    status: dict[_Item, ChangeLabel] = {}
    for table, rows in final.items():
        start, skip = initial.tables.get(table, {}), ignored.get(table, frozenset())
        exp = expected.get(table, TableChanges())
        added_keys = [k for k in sorted(rows, key=str) if k not in start and rows[k] is not None]
        added_rows = [_strip(rows[k], skip) or {} for k in added_keys]
        for key, label in zip(added_keys, match_added(exp.added, added_rows), strict=True):
            status[_Item(table, key, None)] = label
        for key, row in rows.items():
            if key not in start:
                continue
            if row is None:
                status[_Item(table, key, None)] = "needed" if key in exp.removed else "collateral"
                continue
            before, after = _strip(start[key], skip) or {}, _strip(row, skip) or {}
            wanted = exp.updated.get(key, {})
            for column in before:
                item = _Item(table, key, column)
                if before[column] == after.get(column):
                    status[item] = "undone"
                elif column in wanted:
                    status[item] = "needed" if wanted[column][1] == after.get(column) else "wrong"
                else:
                    status[item] = "collateral"
    return status


def _first_deviation(
    changes: Sequence[_Change],
    status: Mapping[_Item, ChangeLabel],
    expected: StateChanges,
    initial: Snapshot,
    ignored: Mapping[str, frozenset[str]],
    diff: Sequence[DiffEntry],
    checks: Sequence[Check],
    consent_call: int | None,
    answer_call: int | None,
) -> Deviation | None:
    """The first call that put an item off course for good; else the first missing change or failed check."""
    history: dict[_Item, list[_Change]] = defaultdict(list)
    for change in changes:
        history[change.item].append(change)
    best: tuple[int, int, str] | None = (
        None  # the earliest call; within it a wrong value before a side effect
    )
    for item, label in sorted(status.items(), key=lambda s: (s[0].table, str(s[0].key), s[0].column or "")):
        if label not in ("wrong", "collateral") or item not in history:
            continue
        steps = history[item]
        on = [_on_course(c, expected, initial, ignored) for c in steps]
        last_on = max((i for i, ok in enumerate(on) if ok), default=-1)
        # every change on course, yet the item is off (the same write made twice): the last one put it there
        culprit = steps[min(last_on + 1, len(steps) - 1)]
        rank = (culprit.call, int(label != "wrong"))
        if best is None or rank < best[:2]:
            best = (*rank, _reason(culprit, label, expected))
    if best is not None:
        return Deviation(kind="call", call_index=best[0], reason=best[2])
    missing = next((e for e in diff if e.kind == "missing"), None)
    if missing is not None:
        where = f"{missing.table} {missing.key}" + (f".{missing.column}" if missing.column else "")
        side = " (on the customer's side: only the customer can make it)" if missing.side == "user" else ""
        return Deviation(
            kind="missing",
            reason=f"the episode ended without an expected change: {where} -> {missing.expected!r}{side}",
        )
    failed = next((c for c in checks if not c.passed), None)
    if failed is None:
        return None
    kind = failed.name.split(":", 1)[0]
    call = consent_call if kind == "consent" else answer_call if kind == "answer" else None
    return Deviation(kind="check", call_index=call, check=failed.name, reason=failed.detail)


def _on_course(
    change: _Change, expected: StateChanges, initial: Snapshot, ignored: Mapping[str, frozenset[str]]
) -> bool:
    """Whether, right after this change, the gold outcome is reachable for its item without undoing it.

    That is: a column is at its expected value or still at its initial one, a removal is expected, a new
    row is one of the expected ones.
    """
    item = change.item
    exp = expected.get(item.table, TableChanges())
    if change.op == "removed":
        return item.key in exp.removed
    if item.column is None:  # a row added (or put back): on course while it is one of the expected rows
        if item.key in initial.tables.get(item.table, {}):
            return item.key not in exp.removed
        wanted = {_canonical(r) for r in exp.added}
        return _canonical(change.after) in wanted
    goal = exp.updated.get(item.key, {}).get(item.column)
    if goal is not None:  # done, or not yet begun (put back where it started)
        return change.after in (goal[1], goal[0])
    start = _strip(initial.tables.get(item.table, {}).get(item.key), ignored.get(item.table, frozenset()))
    return start is None or start.get(item.column) == change.after


def _reason(change: _Change, label: ChangeLabel, expected: StateChanges) -> str:
    item = change.item
    where = f"{item.table} {key_text(item.key)}"
    if change.op == "added":
        wanted = "wants with other values" if label == "wrong" else "does not add"
        return f"added {key_text(item.key)} to {item.table}, a row the task {wanted}"
    if change.op == "removed":
        return f"removed {where}, which the task keeps"
    goal = expected.get(item.table, TableChanges()).updated.get(item.key, {}).get(item.column or "")
    if goal is not None:
        return f"set {where}.{item.column} to {change.after!r}; the task wants {goal[1]!r}"
    if label == "wrong":  # a column of a new row that is a near miss
        return f"set {where}.{item.column} to {change.after!r}, which the task wants otherwise"
    return f"changed {where}.{item.column} to {change.after!r}, which the task leaves alone"


def _canonical(row: Row | None) -> str:
    return json.dumps(row, sort_keys=True, default=str)
