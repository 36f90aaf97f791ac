"""Scoring: the expected-state cache, trajectory replay and reward assembly (DESIGN §5)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Protocol

from env_server.domain import Domain
from env_server.errors import BackendError, GroundstateError, TaskInvalidError
from env_server.sandbox.base import Sandbox, SandboxEngine
from env_server.sandbox.template import Template
from env_server.sandbox.tools import run_tool
from env_server.scoring.communicate import communicated
from env_server.scoring.diff import StateChanges, changes, compare
from shared.models import Check, DiffEntry, ScoreResult, ToolCallResult, ToolCallSpec
from shared.tasks import Task


class Verdict(Protocol):
    """A judge's answer to one yes/no question."""

    question: str
    answer: str
    reason: str


class Judge(Protocol):
    """Answers rubric questions about a transcript; raises `BackendError` when it cannot."""

    model: str

    def ask(
        self, transcript: list[dict[str, str]], questions: list[str], state_diff: str | None = None
    ) -> Sequence[Verdict]:
        """One verdict per question, in order."""
        ...


def template_of(task: Task, domain: Domain) -> Template:
    """The template a task's sandboxes start from."""
    return Template(domain=domain, patch=task.initial_patch)


class Scorer:
    """Turns a final sandbox state (plus the agent's messages) into a reward with reasons."""

    def __init__(self, sandboxes: SandboxEngine, judge: Judge | None = None) -> None:
        self.sandboxes = sandboxes
        self.judge = judge
        self._expected: dict[str, StateChanges] = {}
        self._lock = threading.Lock()

    def expected(self, task: Task, domain: Domain) -> StateChanges:
        """The changes the gold actions make (computed once per task; a failing replay is a task error)."""
        key = f"{task.id}:{template_of(task, domain).key}"
        with self._lock:
            if key in self._expected:
                return self._expected[key]
        results, final = self.replay(
            task, domain, [ToolCallSpec(name=a.tool, arguments=a.args) for a in task.gold_actions]
        )
        failed = [r for r in results if r.error is not None]
        if failed:
            raise TaskInvalidError(
                f"task {task.id}: gold action '{failed[0].name}' was refused: {failed[0].error}",
                field="gold_actions",
            )
        with self._lock:
            self._expected[key] = final
        return final

    def replay(
        self, task: Task, domain: Domain, calls: Sequence[ToolCallSpec]
    ) -> tuple[list[ToolCallResult], StateChanges]:
        """Run `calls` on a fresh sandbox of the task; calls that cannot run count as agent errors."""
        template = template_of(task, domain)
        sandbox = self.sandboxes.create(uuid.uuid4().hex, template)
        try:
            results = []
            for call in calls:
                try:
                    results.append(run_tool(sandbox, domain, call.name, call.arguments))
                except BackendError:
                    raise
                except GroundstateError as exc:  # unknown tool, invalid arguments: the agent's mistake
                    results.append(ToolCallResult(name=call.name, error=exc.message))
            return results, self.actual(sandbox, domain)
        finally:
            sandbox.dispose()

    def actual(self, sandbox: Sandbox, domain: Domain) -> StateChanges:
        """What the sandbox's trajectory changed."""
        initial = self.sandboxes.initial_snapshot(sandbox.template)
        return changes(initial, sandbox.snapshot(), domain.volatile_columns)

    def diff(self, task: Task, domain: Domain, actual: StateChanges) -> list[DiffEntry]:
        """The agent's changes against the expected ones."""
        return compare(self.expected(task, domain), actual)

    def score(
        self, task: Task, domain: Domain, actual: StateChanges, transcript: list[dict[str, str]]
    ) -> ScoreResult:
        """Assemble the reward: state equal, every communicate item said, every rubric question a yes."""
        entries = self.diff(task, domain, actual)
        checks = [Check(name="state", passed=not entries, detail=_summary(entries))]
        agent_messages = [m["content"] for m in transcript if m["role"] == "assistant" and m.get("content")]
        checks += [
            Check(name=f"communicate:{item}", passed=communicated(item, agent_messages))
            for item in task.communicate
        ]
        if task.rubric:
            if self.judge is None:
                return ScoreResult(
                    status="backend_error",
                    reward=None,
                    checks=checks,
                    diff=entries,
                    error=f"task {task.id} has rubric questions but no judge is configured "
                    "(set GROUNDSTATE_JUDGE_BASE_URL and GROUNDSTATE_JUDGE_MODEL)",
                )
            try:
                verdicts = self.judge.ask(transcript, list(task.rubric))
            except BackendError as exc:
                return ScoreResult(
                    status="backend_error", reward=None, checks=checks, diff=entries, error=exc.message
                )
            checks += [
                Check(name=f"rubric:{v.question}", passed=v.answer == "yes", detail=v.reason)
                for v in verdicts
            ]
        reward = int(all(c.passed for c in checks))
        return ScoreResult(status="scored", reward=reward, checks=checks, diff=entries)


def _summary(entries: list[DiffEntry]) -> str:
    if not entries:
        return "final state matches the expected state"
    counts = {k: sum(1 for e in entries if e.kind == k) for k in ("missing", "wrong", "extra")}
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n)
