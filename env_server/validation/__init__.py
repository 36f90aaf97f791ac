"""Task validation: proof that each task's reward means something and that a good agent can earn it.

`validate_task` runs every check that applies to a task (see `CHECKS`) and never raises for a bad task:

- replay checks (`_replay`): the gold scores 1; a do-nothing agent, a wrong trajectory, the gold minus any
  write and the gold plus an unrelated write score 0;
- `columns`: `determined_by` and `ignore_columns` name real columns;
- `arguments`: the reward hinges on no gold value that nothing fixes (`arguments`);
- `communicate-items`: every `communicate` item is an atomic fact;
- `script`, `script-replay`: a policy-following agent gets identity facts, a yes and a reply to its report;
- `reference-replies`: the task's reference reply and its paraphrases, told honestly, earn every fact;
- `boundaries`: an analytics question says which reading of each boundary it means;
- `tolerance`: an analytics answer of whole numbers is compared exactly (no tolerance to hide a near miss),
  and one with a computed average or ratio states its tolerance;
- `text`: no doubled words, weekdays that contradict their dates, or ids that exist nowhere;
- `hack:*` (`adversary`): lazy and cunning agents that try to earn the reward without doing the task all
  score 0, or are honest successes the check explains;
- `gen:*` (`generative`): the reference reply transformed, item by item: assertion-preserving rewrites
  (casing, hyphenation, number words, fillers, reordering, a negated decoy) keep 1, assertion-breaking
  ones (questions, hedges, negations, conditionals, labels and lists of decoys, second answers) give 0.
"""

from __future__ import annotations

from typing import Any

from env_server.analytics.answers import computed, is_exact
from env_server.domain import FIRST_GENERATED_ID, Domain
from env_server.domain._family import entity_ids
from env_server.errors import GroundstateError
from env_server.sandbox.template import Template
from env_server.scoring.communicate import is_atomic
from env_server.scoring.scorer import Scorer
from env_server.validation._replay import (
    Replayer,
    analytics_checks,
    column_references,
    perturbed,
    replay_checks,
)
from env_server.validation._report import CHECKS, CheckOutcome, TaskValidation
from env_server.validation.adversary import hack_checks
from env_server.validation.arguments import argument_check
from env_server.validation.boundaries import boundary_check
from env_server.validation.generative import generative_checks
from env_server.validation.lint import text_check
from env_server.validation.replies import reply_check
from env_server.validation.script import script_check, script_replay
from shared.tasks import Task

__all__ = ["CHECKS", "CheckOutcome", "TaskValidation", "perturbed", "validate_task"]

_KNOWN_IDS: dict[str, frozenset[str]] = {}


def validate_task(task: Task, domain: Domain, scorer: Scorer) -> TaskValidation:
    """Run every check that applies to `task`; failures are reported as checks, never raised."""
    report = TaskValidation(task_id=task.id, domain=task.domain)
    if task.determined_by or task.ignore_columns:
        report.checks.append(column_references(task, domain))
    replayer = Replayer(task, domain, scorer)
    try:
        if task.kind == "analytics":
            _analytics(replayer, report)
        else:
            _action(replayer, report)
    except GroundstateError as exc:  # the gold does not replay, the gold SQL fails: nothing else means much
        report.checks.insert(0, CheckOutcome("gold", False, exc.message))
        return report
    report.checks.append(text_check(task, domain.now, _known_ids(domain, scorer), FIRST_GENERATED_ID))
    return report


def _action(replayer: Replayer, report: TaskValidation) -> None:
    task, domain = replayer.task, replayer.domain
    replayer.scorer.expected(task, domain)  # raises for a gold that does not replay
    checks = replay_checks(replayer)
    report.checks += checks
    if checks[0].passed:  # the gold scores 1: only then does a variant's 0 say something
        outcome, notes = argument_check(replayer)
        report.checks.append(outcome)
        report.notes += [f"arguments: {n}" for n in notes]
    report.checks.append(communicate_items(task))
    if task.communicate:
        report.checks.append(reply_check(replayer))
        report.checks += generative_checks(replayer)
    report.checks.append(script_check(task, domain))
    report.checks.append(script_replay(task, domain))
    report.checks += hack_checks(replayer)


def _analytics(replayer: Replayer, report: TaskValidation) -> None:
    task, domain, scorer = replayer.task, replayer.domain, replayer.scorer
    rows = scorer.gold_rows(task, domain)
    if not rows:
        report.checks.append(
            CheckOutcome("gold", False, "the gold SQL returns no rows: ask a question with an answer")
        )
        return
    report.checks += analytics_checks(replayer, rows)
    report.checks.append(tolerance_check(task, rows))
    outcome, notes = boundary_check(task, domain, scorer, rows)
    report.checks.append(outcome)
    report.notes += [f"boundaries: {n}" for n in notes]
    if task.communicate:
        report.checks.append(communicate_items(task))
        report.checks.append(reply_check(replayer))
    report.checks += hack_checks(replayer)


def tolerance_check(task: Task, rows: list[list[Any]]) -> CheckOutcome:
    """A tolerance only where the answer holds a number that is not whole (a computed ratio or average)."""
    tolerance = task.analytics.tolerance if task.analytics else 0.0
    if tolerance and is_exact(rows):
        return CheckOutcome(
            "tolerance",
            False,
            f"tolerance {tolerance} on an answer of whole numbers: counts, ids and integer amounts compare "
            "exactly, so drop it",
        )
    if not tolerance and computed(rows):
        return CheckOutcome(
            "tolerance",
            False,
            "the answer holds a computed value (an average or ratio, more than two decimals) but the task "
            "states no tolerance: set analytics.tolerance (relative, e.g. 0.01) or ROUND it in the gold SQL "
            "and say so in the question",
        )
    if tolerance:
        return CheckOutcome("tolerance", True, f"relative tolerance {tolerance} for its computed values")
    return CheckOutcome("tolerance", True, "exact")


def communicate_items(task: Task) -> CheckOutcome:
    """Every `communicate` item is an atomic fact (a digit in it, or one term without spaces)."""
    loose = [item for item in task.communicate if not is_atomic(item)]
    if loose:
        return CheckOutcome(
            "communicate-items",
            False,
            "not atomic: "
            + ", ".join(repr(i) for i in loose)
            + " (split into numbers, dates, ids or single terms, or ask it as a rubric question)",
        )
    return CheckOutcome("communicate-items", True, f"{len(task.communicate)} atomic items")


def _known_ids(domain: Domain, scorer: Scorer) -> frozenset[str]:
    """Every id-shaped value in the domain's seed (computed once per domain version)."""
    key = f"{domain.name}:{domain.fingerprint}"
    if key not in _KNOWN_IDS:
        snapshot = scorer.sandboxes.initial_snapshot(Template(domain))
        _KNOWN_IDS[key] = frozenset(
            i
            for rows in snapshot.tables.values()
            for row in rows.values()
            for i in entity_ids(list(row.values()))
        )
    return _KNOWN_IDS[key]
