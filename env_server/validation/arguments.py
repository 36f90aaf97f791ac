"""Argument sensitivity: does the reward hinge on a value that nothing in the task fixes?

Each gold write is replayed with each optional argument removed and each enumerated value (a `Literal` or
`Enum` in the tool's signature) swapped for another. A variant the tool refuses, or one that leaves the
outcome equal, says nothing. A variant that turns the reward from 1 to 0 does so through some columns;
each must be settled by the task: in `determined_by` (the policy rule or the user's fact that fixes it)
or in `ignore_columns` (then the scorer skips it and the variant scores 1). Otherwise an agent that picks
another reasonable value would lose the reward for a choice nobody asked it to make.

The columns a value drives follow from it: when the changed column named like the argument (`cause` ->
`claims.cause`) is determined, so are the amounts computed from it in the same variant. A row present on
one side only (`payments.*`, e.g. no refund row at 0%) is settled by any determined column of its table.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from env_server.scoring.diff import NEW_ROW
from env_server.validation._replay import Replayer, is_write
from env_server.validation._report import CheckOutcome
from shared.models import DiffEntry
from shared.tasks import GoldAction


@dataclass(frozen=True)
class Sensitivity:
    """One variant of one gold write that changes the outcome, and how the task settles it."""

    action: int
    tool: str
    variant: str
    settled: tuple[tuple[str, str], ...]  # (column, reason) for columns in determined_by
    unsettled: tuple[str, ...]

    def describe(self) -> str:
        """`#3 create_ticket without policy_id: tickets.policy_id unsettled`."""
        parts = [f"{c} unsettled" for c in self.unsettled]
        parts += [f"{c} determined by '{why}'" for c, why in self.settled]
        return f"#{self.action} {self.tool} {self.variant}: " + ", ".join(parts)


def enum_values(annotation: Any) -> list[Any]:
    """The values a `Literal[...]` / `Enum` annotation (possibly optional or annotated) allows."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return list(typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(annotation)
        args = args[:1] if origin is typing.Annotated else args
        return [v for a in args if a is not type(None) for v in enum_values(a)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [m.value for m in annotation]
    return []


#: Accepted swaps tried per enumerated argument: one other value already shows a column is sensitive, and a
#: long enumeration (50 states) would otherwise cost a replay per value. Values the tool refuses don't count.
MAX_SWAPS = 3


def variants(args_model: type[BaseModel], args: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, arguments) for each optional argument removed and each enumerated value swapped."""
    for name, info in args_model.model_fields.items():
        if name in args and not info.is_required():
            yield f"without {name}", {k: v for k, v in args.items() if k != name}
        current = args.get(name, None if info.is_required() else info.default)
        current = current.value if isinstance(current, enum.Enum) else current
        for value in enum_values(info.annotation):
            if value != current:
                yield f"with {name}={value}", {**args, name: value}


def changed_columns(entries: list[DiffEntry]) -> set[str]:
    """The "table.column"s a diff differs in; rows added on one side only are compared column by column."""
    columns = {f"{e.table}.{e.column}" for e in entries if e.column}
    by_table: dict[str, tuple[list[Any], list[Any]]] = {}
    for e in entries:
        if e.column:
            continue
        if e.key != NEW_ROW:
            columns.add(f"{e.table}.*")
            continue
        missing, extra = by_table.setdefault(e.table, ([], []))
        (missing if e.kind == "missing" else extra).append(e.expected if e.kind == "missing" else e.actual)
    for table, (missing, extra) in by_table.items():
        for exp_row, act_row in zip(missing, extra, strict=False):
            if isinstance(exp_row, dict) and isinstance(act_row, dict):
                columns |= {
                    f"{table}.{c}" for c in set(exp_row) | set(act_row) if exp_row.get(c) != act_row.get(c)
                }
        if len(missing) != len(extra):
            columns.add(f"{table}.*")
    return columns


def sensitivities(replayer: Replayer) -> list[Sensitivity]:
    """Every variant of a gold write that changes the reward from 1 to 0, with its settlement."""
    task, domain = replayer.task, replayer.domain
    found = []
    for i, action in enumerate(task.gold_actions):
        if not is_write(domain, action) or action.name == domain.conduct.identity_tool:
            continue
        tool = domain.tools_by_name[action.name]
        swaps: dict[str, int] = {}
        for label, args in variants(tool.args_model, action.arguments):
            argument = label.split()[-1].split("=")[0]
            if label.startswith("with ") and swaps.get(argument, 0) >= MAX_SWAPS:
                continue
            actions = [
                *task.gold_actions[:i],
                GoldAction(name=action.name, arguments=args),
                *task.gold_actions[i + 1 :],
            ]
            result, calls = replayer.run(actions)
            if calls[i].error is not None:
                continue  # the tool refused the variant: nothing to settle
            swaps[argument] = swaps.get(argument, 0) + 1
            if result.reward != 0:
                continue  # the same outcome
            columns = sorted(changed_columns(result.diff))
            if not columns:
                continue  # lost through a later call the variant made fail, not through a column
            found.append(settle(task.determined_by, i, action.name, label, columns))
    return found


def settle(determined: dict[str, str], action: int, tool: str, label: str, columns: list[str]) -> Sensitivity:
    """How `determined_by` settles a variant (`label`) of gold write `action` that changed `columns`."""
    argument = label.split()[-1].split("=")[0]  # "without priority" / "with topic=fees"
    settled = tuple((c, determined[c]) for c in columns if c in determined)
    namesake = [c for c, _ in settled if c.split(".", 1)[1] == argument]
    tables = {c.split(".", 1)[0] for c in determined}
    unsettled = tuple(
        c
        for c in columns
        if c not in determined and not namesake and not (c.endswith(".*") and c.split(".")[0] in tables)
    )
    return Sensitivity(action, tool, label, settled, unsettled)


def argument_check(replayer: Replayer) -> tuple[CheckOutcome, list[str]]:
    """The `arguments` check, and a note for every sensitive variant (settled or not)."""
    found = sensitivities(replayer)
    notes = [s.describe() for s in found]
    open_ = [s for s in found if s.unsettled]
    if not open_:
        detail = f"{len(found)} sensitive variants, all settled by determined_by" if found else "no variant"
        return CheckOutcome("arguments", True, detail), notes
    columns = sorted({c for s in open_ for c in s.unsettled})
    detail = (
        "the reward hinges on " + ", ".join(columns) + " (" + "; ".join(s.describe() for s in open_) + "): "
        "say in determined_by what fixes each value (a policy rule, a fact the user gives) or list it in "
        "ignore_columns"
    )
    return CheckOutcome("arguments", False, detail), notes
