"""Task validation: proof that each task's reward means something (DESIGN §5, the checks of `tasks validate`).

For every task: the gold replay succeeds and scores 1; the empty trajectory scores 0 (and, where the gold
changes nothing, a plausible wrong trajectory scores 0); dropping any single gold write scores 0; adding the
domain's unrelated canary write scores 0. Rubric questions need a judge and are not part of validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Domain
from env_server.errors import GroundstateError
from env_server.scoring.scorer import Scorer, submitted_answer
from shared.models import ToolCallSpec
from shared.tasks import GoldAction, Task


@dataclass(frozen=True)
class CheckOutcome:
    """One validation check of one task."""

    name: str
    passed: bool
    detail: str = ""


@dataclass
class TaskValidation:
    """All checks of one task."""

    task_id: str
    domain: str
    checks: list[CheckOutcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True iff every check passed."""
        return all(c.passed for c in self.checks)


def validate_task(task: Task, domain: Domain, scorer: Scorer) -> TaskValidation:
    """Run every check on `task`; never raises for a bad task (failures are reported as checks)."""
    report = TaskValidation(task_id=task.id, domain=task.domain)
    if task.determined_by or task.ignore_columns:
        report.checks.append(column_references(task, domain))
    state_only = task.model_copy(update={"rubric": []})
    said = [{"role": "assistant", "content": " ; ".join(task.communicate)}] if task.communicate else []

    def reward(
        actions: Sequence[GoldAction], messages: list[dict[str, str]] = said
    ) -> tuple[int | None, str]:
        calls = [ToolCallSpec(name=a.tool, arguments=a.args) for a in actions]
        results, actual = scorer.replay(task, domain, calls)
        answer = submitted_answer(results, [c.arguments for c in calls])
        result = scorer.score(state_only, domain, actual, messages, answer)
        failed = [c for c in result.checks if not c.passed]
        return result.reward, "; ".join(f"{c.name}: {c.detail}" for c in failed)

    if task.kind == "analytics":
        return _validate_analytics(task, domain, scorer, report, reward)
    try:
        expected = scorer.expected(task, domain)
    except GroundstateError as exc:
        report.checks.append(CheckOutcome("gold", False, exc.message))
        return report

    r, why = reward(task.gold_actions)
    report.checks.append(CheckOutcome("gold", r == 1, why or "scores 1"))
    if expected or task.communicate:  # a no-change task without messages is checked by `wrong` instead
        r, _ = reward([], [])
        report.checks.append(
            CheckOutcome("empty", r == 0, "scores 0" if r == 0 else "the empty trajectory scores 1")
        )

    if task.wrong_actions or not expected:
        if not task.wrong_actions:
            report.checks.append(CheckOutcome("wrong", False, "gold changes nothing: add wrong_actions"))
        else:
            r, _ = reward(task.wrong_actions)
            report.checks.append(
                CheckOutcome("wrong", r == 0, "scores 0" if r == 0 else "wrong_actions score 1")
            )

    writes = [i for i, a in enumerate(task.gold_actions) if _is_write(domain, a)]
    unneeded = []
    for i in writes:
        r, _ = reward([a for j, a in enumerate(task.gold_actions) if j != i])
        if r != 0:
            unneeded.append(f"#{i} {task.gold_actions[i].tool}")
    if writes:
        detail = (
            f"{len(writes)} writes each needed" if not unneeded else "score 1 without " + ", ".join(unneeded)
        )
        report.checks.append(CheckOutcome("minus-one-write", not unneeded, detail))

    if domain.canary_action is None:
        report.checks.append(CheckOutcome("canary", False, f"domain {domain.name} declares no canary_action"))
    else:
        r, _ = reward([*task.gold_actions, domain.canary_action])
        report.checks.append(
            CheckOutcome("canary", r == 0, "scores 0" if r == 0 else "an extra write scores 1")
        )
    return report


def _validate_analytics(
    task: Task,
    domain: Domain,
    scorer: Scorer,
    report: TaskValidation,
    reward: Callable[[Sequence[GoldAction]], tuple[int | None, str]],
) -> TaskValidation:
    """Analytics tasks: the gold answer scores 1, no answer 0, a perturbed answer 0, an extra write 0."""
    try:
        rows = scorer.gold_rows(task, domain)
    except GroundstateError as exc:
        report.checks.append(CheckOutcome("gold", False, exc.message))
        return report
    if not rows:
        report.checks.append(
            CheckOutcome("gold", False, "the gold SQL returns no rows: ask a question with an answer")
        )
        return report

    def answer(value: list[list[Any]]) -> GoldAction:
        return GoldAction(tool="submit_answer", args={"rows": value})

    r, why = reward([answer(rows)])
    report.checks.append(CheckOutcome("gold", r == 1, why or "scores 1"))
    r, _ = reward([])
    report.checks.append(CheckOutcome("empty", r == 0, "scores 0" if r == 0 else "no answer scores 1"))
    r, _ = reward([answer(perturbed(rows))])
    report.checks.append(
        CheckOutcome("wrong", r == 0, "scores 0" if r == 0 else "a perturbed answer scores 1")
    )
    if domain.canary_action is not None:
        r, _ = reward([domain.canary_action, answer(rows)])
        report.checks.append(CheckOutcome("canary", r == 0, "scores 0" if r == 0 else "a write scores 1"))
    return report


def perturbed(rows: list[list[Any]]) -> list[list[Any]]:
    """A plausible wrong answer: one row fewer, or the first number off by a tenth plus one."""
    if len(rows) > 1:
        return rows[:-1]
    row = list(rows[0])
    for i, cell in enumerate(row):
        if isinstance(cell, int | float) and not isinstance(cell, bool):
            row[i] = cell * 1.1 + 1
            return [row]
    return [[*row[:-1], f"{row[-1]}-not"]] if row else [["nothing"]]


def column_references(task: Task, domain: Domain) -> CheckOutcome:
    """Every "table.column" of `determined_by` and `ignore_columns` names a column of the domain."""
    bad = []
    for ref in [*task.determined_by, *task.ignore_columns]:
        table_name, _, column = ref.partition(".")
        table = domain.metadata.tables.get(table_name)
        if table is None or column not in table.columns:
            bad.append(ref)
    if bad:
        return CheckOutcome("columns", False, "no such table.column in the domain: " + ", ".join(bad))
    return CheckOutcome("columns", True, "determined_by and ignore_columns name real columns")


def _is_write(domain: Domain, action: GoldAction) -> bool:
    tool = domain.tools_by_name.get(action.tool)
    return tool is not None and tool.kind == "write"
