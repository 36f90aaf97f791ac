"""Scoring: the expected-state cache, trajectory replay and reward assembly (docs/design/scoring.md)."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from prometheus_client import Counter

from env_server.analytics import answer_matches
from env_server.analytics.answers import Rows
from env_server.domain import Domain, ToolError
from env_server.errors import BackendError, GroundstateError, TaskInvalidError
from env_server.execution import readonly_query, run_tool, tools_of
from env_server.sandbox import Sandbox, SandboxEngine, Template, template_of
from env_server.sandbox.snapshot import ChangedRows, Snapshot
from env_server.scoring.communicate import Conversation
from env_server.scoring.consent import consent_check, decisive_values, early_write
from env_server.scoring.credit import CallEffect, assign_credit, effect_between
from env_server.scoring.diff import StateChanges, changes, compare, listed, without_columns
from env_server.scoring.identity import identity_check
from env_server.scoring.trajectory import Call, CustomerCall, Trajectory
from env_server.scoring.vocabulary import vocabulary
from shared.judge import JudgeMessage, Verdict
from shared.models import (
    Check,
    Credit,
    DiffEntry,
    GradingVersion,
    ScoreResult,
    ToolCallResult,
    ToolCallSpec,
)
from shared.tasks import GoldAction, Task

#: The version of the scoring rules, recorded in every score's grading version. Bump it whenever a change
#: here or in the checks (diff, communicate, consent, identity, answers) could give a stored trajectory
#: another reward, so that metrics never pool rewards graded by different rules (`groundstate regrade`
#: re-scores).
SCORER_VERSION = "scorer-v3"  # v2: assertions; v3: consent to the proposed change, the `identity` check

log = logging.getLogger(__name__)
DIAGNOSTIC_FAILURES = Counter(
    "groundstate_diagnostic_failures_total",
    "Diagnostics (per-call credit) that raised after the reward was computed: a server bug, never the "
    "agent's; the score is returned without that part",
    ["part"],
)


class RubricJudge(Protocol):
    """Answers rubric questions about a transcript; raises `BackendError` when it cannot."""

    model: str
    prompt_version: str

    def close(self) -> None:
        """Release the judge's connections."""
        ...

    def ask(
        self,
        transcript: Sequence[Mapping[str, Any] | JudgeMessage],
        questions: list[str],
        state_diff: str | None = None,
    ) -> Sequence[Verdict]:
        """One verdict per question, in order."""
        ...


class Scorer:
    """Turns a final sandbox state (plus the agent's messages) into a reward with reasons."""

    def __init__(self, sandboxes: SandboxEngine, judge: RubricJudge | None = None) -> None:
        self.sandboxes = sandboxes
        self.judge = judge
        # Keyed by task id and template; each entry keeps its task, so another task with the same id (a
        # generated draw of another run, an edited task) is never scored against a stale gold.
        self._expected: dict[str, tuple[Task, StateChanges]] = {}
        self._gold_rows: dict[str, tuple[Task, Rows]] = {}
        self._lock = threading.Lock()

    def expected(self, task: Task, domain: Domain) -> StateChanges:
        """The changes the gold actions make (computed once per task; a failing replay is a task error)."""
        key = f"{task.id}:{template_of(task, domain).key}"
        with self._lock:
            hit = self._expected.get(key)
            if hit is not None and _same(hit[0], task):
                return hit[1]
        results, final = self.replay(task, domain, task.gold_actions)
        failed = [r for r in results if r.error is not None]
        if failed:
            raise TaskInvalidError(
                f"task {task.id}: gold action '{failed[0].name}' was refused: {failed[0].error}",
                field="gold_actions",
            )
        with self._lock:
            self._expected[key] = (task, final)
        return final

    def replay(
        self, task: Task, domain: Domain, calls: Sequence[ToolCallSpec | GoldAction]
    ) -> tuple[list[ToolCallResult], StateChanges]:
        """Run `calls` on a fresh sandbox of the task; calls that cannot run count as their maker's errors.

        A `ToolCallSpec` is the agent's; a `GoldAction` is its `actor`'s, so a task's gold and a
        conversation's customer-side calls (`actor: user`, the domain's user tools) replay in the same
        sandbox, in order, as they happened.
        """
        if not calls:  # nothing to run: nothing changed (and no sandbox to build)
            return [], {}
        template = template_of(task, domain)
        tools = {actor: tools_of(actor, task, domain) for actor in ("agent", "user")}
        sandbox = self.sandboxes.create(uuid.uuid4().hex, template)
        try:
            results = []
            for call in calls:
                actor = call.actor if isinstance(call, GoldAction) else "agent"
                try:
                    results.append(run_tool(sandbox, tools[actor], call.name, call.arguments))
                except BackendError:
                    raise
                except GroundstateError as exc:  # unknown tool, invalid arguments: the agent's mistake
                    results.append(ToolCallResult(name=call.name, error=exc.message))
            return results, self.actual(sandbox, domain)
        finally:
            sandbox.dispose()

    def _effects(
        self, task: Task, domain: Domain, trajectory: Trajectory, template: Template, initial: Snapshot
    ) -> tuple[list[CallEffect | None], ChangedRows]:
        """What each of the agent's successful writes changed, replayed in order, and the end's changed rows.

        The customer's own writes (dual control) run in their place too, so the agent's calls after them
        start from the state the episode had; their changes are the customer's and are nobody's effect.
        """
        agent, user = tools_of("agent", task, domain), tools_of("user", task, domain)
        effects: list[CallEffect | None] = [None] * len(trajectory.calls())
        final: ChangedRows = {}
        writes: list[tuple[int | None, Call | CustomerCall]] = []
        index = 0
        for step in trajectory.steps:
            if isinstance(step, Call):
                if step.ran and step.name in agent and agent[step.name].kind == "write":
                    writes.append((index, step))
                index += 1
            elif (
                isinstance(step, CustomerCall)
                and step.ran
                and step.name in user
                and user[step.name].kind == "write"
            ):
                writes.append((None, step))
        if not writes:
            return effects, final
        sandbox = self.sandboxes.create(uuid.uuid4().hex, template)
        try:
            for i, call in writes:
                try:
                    run_tool(sandbox, agent if i is not None else user, call.name, dict(call.arguments))
                except BackendError:
                    raise
                except GroundstateError:  # it ran in the episode; a task edited since may refuse it
                    continue
                now = sandbox.changed_rows()
                if i is not None:
                    effects[i] = effect_between(final, now, initial)
                final = now
        finally:
            sandbox.dispose()
        return effects, final

    def gold_rows(self, task: Task, domain: Domain) -> Rows:
        """The result of an analytics task's gold SQL on its initial state (computed once per task)."""
        if task.analytics is None:
            raise TaskInvalidError(
                f"task {task.id} is an analytics task without `analytics.gold_sql`", field="analytics"
            )
        key = f"{task.id}:{template_of(task, domain).key}"
        with self._lock:
            hit = self._gold_rows.get(key)
            if hit is not None and _same(hit[0], task):
                return hit[1]
        sandbox = self.sandboxes.create(uuid.uuid4().hex, template_of(task, domain))
        try:
            _, rows, _ = readonly_query(sandbox, task.analytics.gold_sql, limit=10_000, timeout_ms=30_000)
        except ToolError as exc:
            raise TaskInvalidError(
                f"task {task.id}: gold SQL failed: {exc}", field="analytics.gold_sql"
            ) from exc
        finally:
            sandbox.dispose()
        with self._lock:
            self._gold_rows[key] = (task, rows)
        return rows

    def actual(self, sandbox: Sandbox, domain: Domain) -> StateChanges:
        """What the sandbox's trajectory changed."""
        initial = self.sandboxes.initial_snapshot(sandbox.template)
        return changes(initial, sandbox.changed_rows(), domain.volatile_columns)

    def diff(self, task: Task, domain: Domain, actual: StateChanges) -> list[DiffEntry]:
        """The agent's changes against the expected ones; the task's `ignore_columns` drop out of both."""
        ignored = task.ignore_columns
        return compare(
            without_columns(self.expected(task, domain), ignored),
            without_columns(actual, ignored),
            domain.user_tables,
        )

    def grading(self, task: Task, domain: Domain) -> GradingVersion:
        """What a score of `task` is graded against now: the task, its domain, these rules, the judge.

        The judge counts only for a task with rubric questions: another judge changes no other reward.
        """
        judge = self.judge if task.rubric else None
        return GradingVersion(
            task_fingerprint=task.fingerprint,
            domain_fingerprint=domain.fingerprint,
            scorer_version=SCORER_VERSION,
            judge_model=judge.model if judge else "",
            judge_prompt_version=judge.prompt_version if judge else "",
        )

    def score(
        self,
        task: Task,
        domain: Domain,
        actual: StateChanges,
        trajectory: Trajectory,
        answer: Any = None,
    ) -> ScoreResult:
        """Assemble the reward: state equal, every fact told, consent before changes, every rubric a yes.

        The judge sees the conversation without the agent's non-answers (messages over `MAX_WORDS` words
        or mostly the policy's own words): a recital cannot talk a judge into a yes. A rubric question
        cannot be a yes when the agent gave no answer at all: that transcript fails it without a judge (so
        a task with a rubric also fails the do-nothing agent where no judge is configured).

        For analytics tasks, `answer` (the rows of the last `submit_answer` call, or None) must also match
        the gold SQL's result.
        """
        entries, changed = self.diff(task, domain, actual), listed(actual, domain.user_tables)
        checks = [Check(name="state", passed=not entries, detail=_summary(entries))]
        if task.kind == "analytics":
            checks.append(self._answer_check(task, domain, answer))
        heard = (
            Conversation(trajectory.messages(), vocabulary(domain), domain.policy, told_values(task, domain))
            if task.communicate or task.rubric
            else None
        )
        if heard is not None and task.communicate:
            for item in task.communicate:
                verdict = heard.told(item)
                checks.append(Check(name=f"communicate:{item}", passed=verdict.passed, detail=verdict.detail))
        consent = consent_check(trajectory, domain)
        if consent is not None:
            checks.append(consent)
        identity = identity_check(trajectory, domain)
        if identity is not None:
            checks.append(identity)
        said = trajectory.messages("assistant")
        answers = heard.answers() if heard is not None and task.rubric else []
        if task.rubric and not any(m.role == "assistant" for m in answers):
            # nothing said, or only recitals: no rubric question can be a yes, and no judge is needed
            why = "the agent sent no message" if not said else "the agent sent no answer (only recitals)"
            checks += [Check(name=f"rubric:{q}", passed=False, detail=why) for q in task.rubric]
        elif task.rubric:
            if self.judge is None:
                return ScoreResult(
                    status="backend_error",
                    reward=None,
                    checks=checks,
                    diff=entries,
                    changes=changed,
                    error=f"task {task.id} has rubric questions but no judge is configured "
                    "(set GROUNDSTATE_JUDGE_BASE_URL and GROUNDSTATE_JUDGE_MODEL)",
                )
            try:
                chat = [{"role": m.role, "content": m.content} for m in answers]
                verdicts = self.judge.ask(chat, list(task.rubric))
            except BackendError as exc:
                return ScoreResult(
                    status="backend_error",
                    reward=None,
                    checks=checks,
                    diff=entries,
                    changes=changed,
                    error=exc.message,
                )
            checks += [
                Check(name=f"rubric:{v.question}", passed=v.answer == "yes", detail=v.reason)
                for v in verdicts
            ]
        reward = int(all(c.passed for c in checks))
        result = ScoreResult(
            status="scored",
            reward=reward,
            checks=checks,
            diff=entries,
            changes=changed,
            grading=self.grading(task, domain),
        )
        if task.rubric and said and self.judge is not None:
            result.judge_model, result.judge_prompt_version = self.judge.model, self.judge.prompt_version
        return result

    def with_credit(
        self, task: Task, domain: Domain, trajectory: Trajectory, result: ScoreResult
    ) -> ScoreResult:
        """`result` with its per-call credit, computed after the reward and never able to void it.

        Contract 3: no diagnostic can void a reward. A backend error while crediting, or any exception at
        all (a server bug, logged with its traceback and counted in
        `groundstate_diagnostic_failures_total`), loses only the credit: the score comes back with
        `diagnostics_error` saying why. Were it a 500 or a backend error, a policy could void its own 0.
        """
        if result.status != "scored":
            return result
        try:
            result.credit = self.credit(task, domain, trajectory, result)
        except BackendError as exc:
            result.diagnostics_error = f"per-call credit left out: the backend failed ({exc.message})"
        except Exception as exc:  # a diagnostic's bug must not become the episode's 500
            log.exception("server bug: per-call credit of a %s trajectory raised", task.id)
            DIAGNOSTIC_FAILURES.labels("credit").inc()
            result.diagnostics_error = (
                f"per-call credit left out: it failed on a server bug ({type(exc).__name__}, logged); "
                "the reward stands"
            )
        return result

    def credit(self, task: Task, domain: Domain, trajectory: Trajectory, result: ScoreResult) -> Credit:
        """Per-call credit of a scored trajectory (`env_server.scoring.credit`); never changes the reward.

        The successful write calls are replayed on a fresh sandbox of the task, reading the changed rows
        after each: the cost grows with the writes and the rows they change, not with table sizes. Reads
        and refused calls change nothing and are not replayed.
        """
        calls = trajectory.calls()
        template = template_of(task, domain)
        initial = self.sandboxes.initial_snapshot(template)
        effects, final = self._effects(task, domain, trajectory, template, initial)
        ignored: dict[str, frozenset[str]] = {t: frozenset(c) for t, c in domain.volatile_columns.items()}
        for entry in task.ignore_columns:
            table, _, column = entry.partition(".")
            ignored[table] = ignored.get(table, frozenset()) | {column}
        answers = [i for i, c in enumerate(calls) if c.name == "submit_answer" and c.ran]
        return assign_credit(
            [c.name for c in calls],
            effects,
            initial=initial,
            final=final,
            expected=without_columns(self.expected(task, domain), task.ignore_columns),
            ignored=ignored,
            reward=result.reward,
            diff=result.diff,
            checks=result.checks,
            consent_call=early_write(trajectory, domain),
            answer_call=answers[-1] if answers else None,
        )

    def _answer_check(self, task: Task, domain: Domain, answer: Any) -> Check:
        if answer is None:
            return Check(name="answer", passed=False, detail="no answer was submitted (submit_answer)")
        gold = self.gold_rows(task, domain)
        tolerance = task.analytics.tolerance if task.analytics else 0.0
        matched, detail = answer_matches(answer, gold, tolerance)
        return Check(name="answer", passed=matched, detail=detail)


def submitted_answer(calls: Sequence[Call]) -> Any:
    """The rows of the last successful `submit_answer` call, or None."""
    for call in reversed(calls):
        if call.name == "submit_answer" and call.ran:
            return call.arguments.get("rows")
    return None


def _same(cached: Task, task: Task) -> bool:
    """Whether a cache entry's task is `task` (the registry hands out the same objects: `is` decides fast)."""
    return cached is task or cached == task


def _summary(entries: list[DiffEntry]) -> str:
    if not entries:
        return "final state matches the expected state"
    counts = {k: sum(1 for e in entries if e.kind == k) for k in ("missing", "wrong", "extra")}
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n)


def told_values(task: Task, domain: Domain) -> list[str]:
    """The values of the task the agent rightly states, none a rival of another: no guess among them.

    The task's `communicate` items and the decisive values (amounts, dates) of its gold writes that need
    the customer's yes: a proposal must name those ("file, $2,350, 2026-09-27"), so naming them beside a
    reply's item is telling the change, not offering another answer for the item.
    """
    decisive = [
        v
        for a in task.gold_actions
        if a.actor == "agent" and domain.conduct.needs_yes(a.name)
        for v in decisive_values(a.name, a.arguments, domain)
    ]
    return list(dict.fromkeys([*task.communicate, *decisive]))
