"""Building a task's typed parts in a family: its gold (and wrong) actions, its user, its reference reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.tasks import GoldAction, ReferenceReply, ScriptLine, UserSpec


def call(name: str, /, **arguments: Any) -> GoldAction:
    """One reference tool call, `call("cancel_booking", booking_id="BK-70412", reason="plans changed")`.

    `name` is positional-only so a tool may itself take an argument called `name`.
    """
    return GoldAction(name=name, arguments=arguments)


def user_call(name: str, /, **arguments: Any) -> GoldAction:
    """One reference call the customer makes on their own side (a user tool), e.g. restarting a router.

    The task's script makes the same call on the line where the customer does it (`ScriptLine.actions`).
    """
    return GoldAction(name=name, arguments=arguments, actor="user")


def user_spec(
    persona: str,
    goal: str,
    script: Sequence[str | ScriptLine],
    known: dict[str, Any] | None = None,
    *,
    unknown: list[str] | None = None,
    instructions: str = "",
) -> UserSpec:
    """The simulated user of a task: who they are, what they want, what they know and say.

    Args:
        persona: who the user is and how they talk (a `Caller.persona` line).
        goal: what the user wants out of the conversation.
        script: the scripted user's lines; the first opens the conversation. A `ScriptLine` also acts.
        known: facts the user can give when asked (`known_info`), e.g. a `Caller.known()`.
        unknown: facts the user does not know.
        instructions: how the user behaves (what to accept, what to refuse).
    """
    return UserSpec(
        persona=persona,
        goal=goal,
        known_info=known or {},
        unknown_info=unknown or [],
        instructions=instructions,
        script=list(script),
    )


def reply(text: str, *paraphrases: str, after_writes: bool = False) -> ReferenceReply:
    """What a good agent says to tell the task's `communicate` facts, and the same in other words.

    Args:
        text: the reference reply, worded from the scene's values.
        *paraphrases: at least one rewording (other order, other number and date forms).
        after_writes: said in the report after the changes (a new ticket's id), not before them.
    """
    return ReferenceReply(text=text, paraphrases=list(paraphrases), after_writes=after_writes)
