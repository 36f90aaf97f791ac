"""What `groundstate tasks validate` prints: each check's tally, the adversarial suite's, and every failure.

The adversarial suite gets a table of its own: per hack, the tasks it ran on and how each came out (scored
0, an honest success, left to the rubric judge, or beat the reward), because "0 beat it" is the claim the
docs' validity guarantees make.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from env_server.validation._report import CHECKS, HACKS, CheckOutcome, TaskValidation
from env_server.validation.adversary import HONEST, JUDGE_DECIDES, SCORED_ZERO
from env_server.validation.generative import TRANSFORMATIONS

#: How a hack's check can come out, in the order the table lists them.
OUTCOMES = ("scored 0", "honest success", "judge decides", "beat it")


def check_counts(reports: list[TaskValidation]) -> dict[str, tuple[int, int]]:
    """Per check (in `CHECKS` order): tasks it ran on, tasks it passed."""
    counts = {}
    for name in CHECKS:
        ran = [c for r in reports for c in r.checks if c.name == name]
        if ran:
            counts[name] = (len(ran), sum(c.passed for c in ran))
    return counts


def outcome(check: CheckOutcome) -> str:
    """How one hack's check came out (one of `OUTCOMES`)."""
    if not check.passed:
        return "beat it"
    if check.detail.startswith(HONEST):
        return "honest success"
    if check.detail.startswith(JUDGE_DECIDES):
        return "judge decides"
    return "scored 0" if check.detail.startswith(SCORED_ZERO) else "honest success"


def hack_counts(reports: list[TaskValidation]) -> dict[str, Counter[str]]:
    """Per hack that ran (in `HACKS` order): how many tasks came out each way."""
    counts: dict[str, Counter[str]] = {}
    for name in HACKS:
        ran = [c for r in reports for c in r.checks if c.name == name]
        if ran:
            counts[name.removeprefix("hack:")] = Counter(outcome(c) for c in ran)
    return counts


def generated_counts(reports: list[TaskValidation]) -> dict[str, dict[str, int]]:
    """Per transformation of the generative adversary: its kind, tasks and items tried, items that held.

    `preserving` is 1 for a rewrite that must keep the reward (0: one that must break the item); an item
    that did not hold is one where a preserved reply lost its 1 or a broken one was still credited.
    """
    counts: dict[str, dict[str, int]] = {}
    for t in TRANSFORMATIONS:
        ran = [c for r in reports for c in r.checks if c.name == f"gen:{t.name}" and c.counts is not None]
        if ran:
            items = sum(c.counts[0] for c in ran if c.counts)
            held = sum(c.counts[1] for c in ran if c.counts)
            counts[t.name] = {
                "preserving": int(t.preserving),
                "tasks": len(ran),
                "items": items,
                "held": held,
                "failed": items - held,
            }
    return counts


def print_validation(console: Console, reports: list[TaskValidation], backend: str) -> None:
    """Every failed check, the checks' tally, the adversarial suite's tally and the verdict."""
    table = Table("check", title=f"task validity ({backend}): {len(reports)} tasks")
    for column in ("tasks", "passed", "failed"):
        table.add_column(column, justify="right")
    counts = check_counts(reports)
    gen_ran = [c for r in reports for c in r.checks if c.name.startswith("gen:")]
    if gen_ran:
        counts["gen:*"] = (len(gen_ran), sum(c.passed for c in gen_ran))
    for name, (ran, passed) in counts.items():
        if name in HACKS:
            continue
        failed = f"[red]{ran - passed}[/red]" if ran > passed else "0"
        table.add_row(name, str(ran), str(passed), failed)
    ok = sum(r.passed for r in reports)
    table.add_section()
    table.add_row("[b]all tasks[/b]", str(len(reports)), str(ok), str(len(reports) - ok))
    for r in reports:
        for c in r.checks:
            if not c.passed:
                console.print(f"[red]{r.task_id}[/red] {c.name}: {c.detail}", soft_wrap=True, highlight=False)
    console.print(table)
    hacks = hack_counts(reports)
    if hacks:
        suite = Table("hack", title="adversarial suite: tasks per outcome")
        for column in OUTCOMES:
            suite.add_column(column, justify="right")
        for name, tally in hacks.items():
            beat = f"[red]{tally['beat it']}[/red]" if tally["beat it"] else "0"
            suite.add_row(name, *(str(tally[o]) for o in OUTCOMES[:-1]), beat)
        console.print(suite)
    generated = generated_counts(reports)
    if generated:
        gen = Table(
            "transformation", title="generative adversary: reference replies transformed, items per outcome"
        )
        gen.add_column("must")
        for column in ("tasks", "items", "held", "failed"):
            gen.add_column(column, justify="right")
        for name, n in generated.items():
            failed = f"[red]{n['failed']}[/red]" if n["failed"] else "0"
            must = "keep 1" if n["preserving"] else "give 0"
            gen.add_row(name, must, str(n["tasks"]), str(n["items"]), str(n["held"]), failed)
        console.print(gen)
    console.print(f"{ok} passed, {len(reports) - ok} failed ({backend})")


class _CheckTally(BaseModel):
    tasks: int
    passed: int


class _CheckJson(BaseModel):
    name: str
    passed: bool
    detail: str


class _TaskJson(BaseModel):
    task_id: str
    domain: str
    passed: bool
    checks: list[_CheckJson]
    notes: list[str]


class ValidationJson(BaseModel):
    """What `tasks validate --json` prints: the totals, each check's tally, and every task's checks."""

    backend: str
    tasks: int
    passed: int
    failed: int
    checks: dict[str, _CheckTally]
    hacks: dict[str, dict[str, int]]
    generated: dict[str, dict[str, int]]
    results: list[_TaskJson]


def validation_json(reports: list[TaskValidation], backend: str) -> ValidationJson:
    """The report as JSON-ready data."""
    ok = sum(r.passed for r in reports)
    return ValidationJson(
        backend=backend,
        tasks=len(reports),
        passed=ok,
        failed=len(reports) - ok,
        checks={n: _CheckTally(tasks=ran, passed=p) for n, (ran, p) in check_counts(reports).items()},
        hacks={name: {o: tally[o] for o in OUTCOMES} for name, tally in hack_counts(reports).items()},
        generated=generated_counts(reports),
        results=[
            _TaskJson(
                task_id=r.task_id,
                domain=r.domain,
                passed=r.passed,
                checks=[_CheckJson(name=c.name, passed=c.passed, detail=c.detail) for c in r.checks],
                notes=r.notes,
            )
            for r in reports
        ],
    )
