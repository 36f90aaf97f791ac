"""The task shapes validation demands, built once: a scripted conversation, a refusal, an analytics question.

`tasks validate` holds every task to a few shapes (`env_server/validation/`): an action task's script gives
the caller's identity facts, then an explicit yes, then a line for the agent's report (`script`); a task
whose gold changes nothing proves it can fail with a decisive fact the agent must say and a plausible wrong
trajectory (`communicate`, `wrong_actions`); an analytics answer compares exactly unless it holds a computed
ratio (`tolerance`). Every domain's families used to spell these out by hand; these builders put the parts
in the order the checks read them, so a family states only its scenario's words.

They build task fields, not whole tasks (except `analytics_task`, whose fields are all the shape's): a
family passes them to `ScenarioContext.task` with its own description, user and patch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from env_server.domain._family import ScenarioContext
from env_server.domain._gold import user_spec
from shared.tasks import GoldAction, ReferenceReply, Task

#: The closing line most scripts end with: it is the line left for the agent's report.
THANKS = "Thank you, that's all."


def conversation(
    request: str,
    *,
    identity: str | None = None,
    yes: str | None = None,
    then: Sequence[str] = (),
    thanks: str = THANKS,
) -> list[str]:
    """A scripted user's lines in the order a policy-following agent asks for them.

    The request opens the conversation; the identity line answers the agent's identity questions (a
    `Caller.identity_line()`); the yes answers its proposal (it must say yes explicitly where the domain's
    `Conduct` wants consent); `then` holds further answers; `thanks` is the line left for the report.

    Args:
        request: the opening line: what the caller wants, with the IDs they know.
        identity: the line that gives the identity facts, when the gold verifies the caller.
        yes: the explicit yes (or, in a refusal, the line that accepts it).
        then: lines after the yes (a second request, an answer to a follow-up question).
        thanks: the closing line.
    """
    return [request, *([identity] if identity else []), *([yes] if yes else []), *then, thanks]


class Refusal(TypedDict):
    """The fields of a task whose right answer is to change nothing and say why."""

    gold_actions: list[GoldAction]
    wrong_actions: list[GoldAction]
    communicate: list[str]
    reference_reply: ReferenceReply


def refusal(
    decisive: str | Sequence[str],
    said: ReferenceReply,
    *,
    reads: Sequence[GoldAction],
    wrong: Sequence[GoldAction],
) -> Refusal:
    """A refusal: the gold only reads, the agent must say the decisive fact, the wrong trajectory writes.

    The empty trajectory must score 0 on every task; with no write in the gold, only the `communicate`
    item can make it fail, and only `wrong_actions` proves the state check sees the write the policy
    forbids (validation requires both).

    Args:
        decisive: the atomic fact the refusal turns on ("non-refundable", "$45.00"), or several.
        said: the reference reply that tells it (`reply(...)`, with a paraphrase).
        reads: the gold's read calls (what a careful agent looks up before refusing).
        wrong: what a careless agent does instead (usually the identity check, then the forbidden write).
    """
    items = [decisive] if isinstance(decisive, str) else list(decisive)
    if not items or not all(items):
        raise ValueError("a refusal needs the decisive fact the agent must say")
    if not wrong:
        raise ValueError("a refusal needs the wrong trajectory that must score 0")
    return Refusal(
        gold_actions=list(reads), wrong_actions=list(wrong), communicate=items, reference_reply=said
    )


def analytics_task(
    ctx: ScenarioContext,
    *,
    persona: str,
    description: str,
    sql: str,
    tags: Sequence[str] = (),
    script: Sequence[str] | None = None,
    goal: str | None = None,
    instructions: str = "",
    tolerance: float = 0.0,
    **fields: Any,
) -> Task:
    """An analytics task: a staff member's read-only question, answered by the rows of a gold SELECT.

    The tolerance rule: an answer of whole numbers (counts, ids, cents) compares exactly, so leave
    `tolerance` at 0; give one (relative, at most 0.05) only when the answer holds a computed average or
    ratio. Validation fails a task that gets this wrong either way.

    Args:
        persona: who asks ("Nadia Rahman, loyalty programme analyst; precise").
        description: the catalogue line; also the user's goal unless `goal` is given.
        sql: the gold SELECT over the domain's tables.
        tags: difficulty tags after "analytics".
        script: the user's lines; by default the description, asked as the question.
        goal: the user's goal when it differs from the description.
        instructions: how the staff member behaves.
        tolerance: the relative tolerance of computed values.
        **fields: other task fields (`initial_patch` when the question is about fresh rows).
    """
    return ctx.task(
        kind="analytics",
        difficulty_tags=["analytics", *tags],
        description=description,
        user=user_spec(
            persona,
            goal if goal is not None else description,
            list(script) if script is not None else [description],
            instructions=instructions,
        ),
        analytics={"gold_sql": sql, "tolerance": tolerance},
        **fields,
    )
