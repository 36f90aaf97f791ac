"""Replay checks: proof that each task's reward means something (docs/design/scoring.md).

Every trajectory is played as a conversation with the scripted user (`_flow`), calls interleaved, and
scored the way a live episode is. For every task: the gold, told with the task's reference reply in the
canonical policy-following conversation, scores 1; the empty trajectory with an empty transcript scores
0 (always, whether or not the gold changes anything); where the gold changes nothing, a plausible wrong
trajectory fails the state check; dropping any single gold write fails it (or, for the identity check,
gets a later gold call refused); adding the domain's unrelated canary write fails it. Analytics tasks: the
gold answer scores 1, no answer, a perturbed answer and an extra write score 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Domain
from env_server.scoring.diff import StateChanges
from env_server.scoring.scorer import Scorer, submitted_answer
from env_server.scoring.trajectory import Call, CustomerCall, Message, Step, Trajectory
from env_server.validation._flow import Line, honest_script, is_write
from env_server.validation._report import CheckOutcome
from shared.models import ScoreResult, ToolCallResult
from shared.tasks import GoldAction, Task

__all__ = ["Replayer", "is_write"]


@dataclass
class Replayer:
    """Scores trajectories of one task on fresh sandboxes, as a live episode would be scored."""

    task: Task
    domain: Domain
    scorer: Scorer
    _outputs: dict[tuple[int, ...], list[Any]] = field(default_factory=dict, repr=False)
    _replays: dict[str, tuple[list[ToolCallResult], StateChanges]] = field(default_factory=dict, repr=False)

    def outputs(self, indices: Sequence[int]) -> list[Any]:
        """What the gold calls at `indices` return, played in order on a fresh sandbox (once per set)."""
        key = tuple(indices)
        if key not in self._outputs:
            gold = self.task.gold_actions
            results, _ = self.scorer.replay(self.task, self.domain, [gold[i] for i in key])
            self._outputs[key] = [r.output for r in results]
        return self._outputs[key]

    def play(
        self, lines: Sequence[Line], *, rubric: bool = False
    ) -> tuple[ScoreResult, list[ToolCallResult]]:
        """Replay the calls among `lines` in order and score the whole trajectory.

        The customer's own calls (`actor: user`) run in their place in the same sandbox but are no step of
        the agent's trajectory, exactly as a live episode records them apart.

        Rubric questions need a judge, so they are left out unless `rubric` is set; the scorer fails them
        without a judge when the agent said nothing, which is the only case validation scores them in.
        """
        task = self.task if rubric else self.task.model_copy(update={"rubric": []})
        actions = [line for line in lines if isinstance(line, GoldAction)]
        results, actual = self._replay(actions)
        ran = iter(results)
        steps: list[Step] = []
        for line in lines:
            if isinstance(line, Message):
                steps.append(line)
            else:
                result = next(ran)
                if line.actor == "agent":
                    steps.append(Call(line.name, line.arguments, result.output, result.error))
                else:
                    steps.append(CustomerCall(line.name, line.arguments, result.error))
        trajectory = Trajectory.of(steps)
        answer = submitted_answer(trajectory.calls())
        return self.scorer.score(task, self.domain, actual, trajectory, answer), results

    def _replay(self, actions: list[GoldAction]) -> tuple[list[ToolCallResult], StateChanges]:
        """The calls' results and final state, replayed once per distinct list of calls.

        A replay is deterministic (a frozen clock, deterministic ids), and most checks tell the same calls
        with other words: the reference replies, the message hacks and every generated attack reuse the
        gold's replay instead of building a sandbox each.
        """
        key = json.dumps([a.model_dump(mode="json") for a in actions], sort_keys=True, default=str)
        if key not in self._replays:
            self._replays[key] = self.scorer.replay(self.task, self.domain, actions)
        results, actual = self._replays[key]
        return list(results), actual

    def honest(
        self,
        actions: Sequence[GoldAction],
        reply: str | None = None,
        skip_user_actions: frozenset[int] = frozenset(),
        canonical: bool = True,
        rewrite: Callable[[str], str] | None = None,
    ) -> list[Line]:
        """The canonical conversation around `actions`, told with `reply` (by default the task's own).

        The customer makes their script's calls but those in `skip_user_actions` (ordinals over the script);
        `canonical` False: a hack's conversation; `rewrite`: how the canonical agent's own words are said
        (see `honest_script`).
        """
        ref = self.task.reference_reply
        text = reply if reply is not None else (ref.text if ref else None)
        after = bool(ref and ref.after_writes)
        return honest_script(
            self.task,
            self.domain,
            actions,
            text,
            after,
            skip_user_actions,
            canonical=canonical,
            rewrite=rewrite,
        ).lines

    def run(
        self, actions: Sequence[GoldAction], skip_user_actions: frozenset[int] = frozenset()
    ) -> tuple[ScoreResult, list[ToolCallResult]]:
        """`actions` played in the canonical conversation with the reference reply, and scored."""
        return self.play(self.honest(actions, skip_user_actions=skip_user_actions))

    def reward(self, actions: Sequence[GoldAction]) -> tuple[int | None, str]:
        """The reward of `actions` told honestly, and why it is not 1 (the failed checks)."""
        result, _ = self.run(actions)
        return result.reward, failures(result)

    def state_fails(
        self, actions: Sequence[GoldAction], skip_user_actions: frozenset[int] = frozenset()
    ) -> bool:
        """Whether `actions`, told honestly, fail the state check (not just some other check)."""
        result, _ = self.run(actions, skip_user_actions)
        return any(c.name == "state" and not c.passed for c in result.checks)

    def empty(self) -> CheckOutcome:
        """No tool call and no message must score 0, rubric included (a do-nothing agent fails)."""
        result, _ = self.play([], rubric=True)
        if result.reward == 0:
            return CheckOutcome("empty", True, "scores 0")
        return CheckOutcome(
            "empty",
            False,
            "a do-nothing agent scores 1: check that the agent told the person the decisive fact "
            "(a communicate item with the number, date, rule or amount, or a narrow rubric question)",
        )


def failures(result: ScoreResult) -> str:
    """The failed checks of a score, as one line."""
    return "; ".join(f"{c.name}: {c.detail}" for c in result.checks if not c.passed)


def replay_checks(replayer: Replayer) -> list[CheckOutcome]:
    """gold, empty, wrong, minus-one-write and canary for an action task."""
    task, domain = replayer.task, replayer.domain
    r, why = replayer.reward(task.gold_actions)
    checks = [CheckOutcome("gold", r == 1, why or "scores 1"), replayer.empty()]
    expected = replayer.scorer.expected(task, domain)
    if task.wrong_actions or not expected:
        if not task.wrong_actions:
            checks.append(CheckOutcome("wrong", False, "gold changes nothing: add wrong_actions"))
        else:
            bites = replayer.state_fails(task.wrong_actions)
            checks.append(
                CheckOutcome(
                    "wrong", bites, "fails the state check" if bites else "wrong_actions pass the state check"
                )
            )

    writes = [i for i, a in enumerate(task.gold_actions) if is_write(domain, a)]
    unneeded = [f"#{i} {task.gold_actions[i].name}" for i in writes if not _write_needed(replayer, i)]
    if writes:
        detail = (
            f"{len(writes)} writes each needed"
            if not unneeded
            else "state passes without " + ", ".join(unneeded)
        )
        checks.append(CheckOutcome("minus-one-write", not unneeded, detail))
    checks.append(_canary(replayer, task.gold_actions))
    if task.user.user_actions() or any(a.actor == "user" for a in task.gold_actions):
        checks += user_action_checks(replayer)
    return checks


def _write_needed(replayer: Replayer, i: int) -> bool:
    """Whether the gold without its write #i fails the state check (`minus-one-write`).

    The identity check is needed as well when, without it, a later gold call is refused: a check that gates
    only a read (a SIM's PUK the agent must tell) leaves no state of its own, and the canonical agent tells
    the read's value whatever the call returned, so the state alone cannot show that the read needs it.
    """
    gold = replayer.task.gold_actions
    result, results = replayer.run([a for j, a in enumerate(gold) if j != i])
    if any(c.name == "state" and not c.passed for c in result.checks):
        return True
    if gold[i].name != replayer.domain.conduct.identity_tool:
        return False
    _, full = replayer.run(gold)
    return sum(r.error is not None for r in results) > sum(r.error is not None for r in full)


def user_action_checks(replayer: Replayer) -> list[CheckOutcome]:
    """A dual-control task's customer actions: the script makes the gold's, and each of them is needed.

    `user-actions`: the script's calls, in the order its lines say them, are the gold's `actor: user` calls
    (same tools, same arguments), and each names a user tool of the domain; so the scripted customer, doing
    what their lines say, leaves the gold's state on their side.
    `minus-one-user-action`: the agent's gold told honestly, with the customer leaving any single one of
    their calls undone (and with none of them done), fails the state check: the task really needs the
    customer to act, and the agent cannot finish it alone.
    """
    task, domain = replayer.task, replayer.domain
    scripted = [(a.name, a.arguments) for a in task.user.user_actions()]
    gold = [(a.name, a.arguments) for a in task.gold_actions if a.actor == "user"]
    unknown = sorted({name for name, _ in scripted + gold if name not in domain.user_tools_by_name})
    problems = []
    if unknown:
        problems.append(f"not user tools of domain {domain.name}: {unknown}")
    if scripted != gold:
        problems.append(
            f"the script's actions {[n for n, _ in scripted]} are not the gold's user actions "
            f"{[n for n, _ in gold]} (same calls, same arguments, same order)"
        )
    checks = [
        CheckOutcome("user-actions", not problems, "; ".join(problems) or f"{len(gold)} customer actions")
    ]
    if problems:
        return checks
    everything = frozenset(range(len(scripted)))
    skips = [frozenset({i}) for i in range(len(scripted))] + ([everything] if len(scripted) > 1 else [])
    unneeded = [
        "none done" if skip == everything and len(scripted) > 1 else f"#{min(skip)} {scripted[min(skip)][0]}"
        for skip in skips
        if not replayer.state_fails(task.gold_actions, skip)
    ]
    detail = (
        f"each of {len(scripted)} customer actions needed"
        if not unneeded
        else "state passes without the customer's " + ", ".join(unneeded)
    )
    checks.append(CheckOutcome("minus-one-user-action", not unneeded, detail))
    return checks


def analytics_checks(replayer: Replayer, rows: list[list[Any]]) -> list[CheckOutcome]:
    """gold, empty, wrong and canary for an analytics task whose gold SQL returns `rows`."""

    def answer(value: list[list[Any]]) -> GoldAction:
        return GoldAction(name="submit_answer", arguments={"rows": value})

    r, why = replayer.reward([answer(rows)])
    checks = [CheckOutcome("gold", r == 1, why or "scores 1"), replayer.empty()]
    r, _ = replayer.reward([answer(perturbed(rows))])
    checks.append(CheckOutcome("wrong", r == 0, "scores 0" if r == 0 else "a perturbed answer scores 1"))
    checks.append(_canary(replayer, [answer(rows)], first=True))
    return checks


def _canary(replayer: Replayer, actions: list[GoldAction], first: bool = False) -> CheckOutcome:
    canary = replayer.domain.canary_action
    if canary is None:
        return CheckOutcome("canary", False, f"domain {replayer.domain.name} declares no canary_action")
    bites = replayer.state_fails([canary, *actions] if first else [*actions, canary])
    return CheckOutcome("canary", bites, "fails the state check" if bites else "an extra write passes")


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
    """Every "table.column" of `determined_by` and `ignore_columns` names a column of the domain.

    `determined_by` may also hold "table.*": what fixes whether a row of that table exists at all.
    """
    bad = []
    refs = [(r, r.endswith(".*")) for r in task.determined_by] + [(r, False) for r in task.ignore_columns]
    for ref, whole_row in refs:
        table_name, _, column = ref.partition(".")
        table = domain.metadata.tables.get(table_name)
        if table is None or (column not in table.columns and not whole_row):
            bad.append(ref)
    both = sorted(set(task.determined_by) & set(task.ignore_columns))
    if bad:
        return CheckOutcome("columns", False, "no such table.column in the domain: " + ", ".join(bad))
    if both:
        return CheckOutcome("columns", False, "both determined and ignored: " + ", ".join(both))
    return CheckOutcome("columns", True, "determined_by and ignore_columns name real columns")
