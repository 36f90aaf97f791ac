"""The deterministic scripted user: replays `task.user.script`, one line per agent message.

A `{say, actions}` line of a dual-control task also acts: the user makes the line's user-tool calls on its
side, in order, then says the line. It does not read their results: the script already says what happened.
A line with `when_told` terms acts only when the agent's message it answers says them all (the agent asked
for that very thing); otherwise the customer does nothing and asks what to do (`NOT_TOLD`), and the line
is spent, as any line is once answered.

Whatever line it is at, the customer also follows the domain's `user_instructions` (`Instruction`) the
first time the agent's message gives one whose call no script line makes: told to restart a router that
was never the problem, a customer restarts it, and the state shows the needless change.
"""

from __future__ import annotations

from collections.abc import Sequence

from env_server.domain import Instruction
from env_server.scoring.communicate import communicated
from env_server.users.base import STOP_MARK, SimulatedUser, TranscriptMessage, UserSide, UserTurn
from shared.tasks import GoldAction, Task, UserAction

#: What the scripted user says when its script has run out; the conversation is over.
END_OF_SCRIPT = STOP_MARK
#: What the customer says instead of an acting line whose `when_told` terms the agent did not say.
NOT_TOLD = "Sorry, I'm not sure what you want me to do on my side. What exactly should I change?"


class ScriptedUser(SimulatedUser):
    """Line k of the script answers the agent's k-th message; after the last line the user is done."""

    kind = "scripted"
    prompt_version = "scripted-v1"

    def opening(self, task: Task, seed: int | None = None) -> UserTurn:
        """The script's first line (it only talks: `UserSpec` refuses actions on it)."""
        return UserTurn(content=task.user.lines[0], done=False)

    def reply(
        self,
        task: Task,
        transcript: list[TranscriptMessage],
        writes_this_turn: int,
        seed: int | None = None,
        side: UserSide | None = None,
    ) -> UserTurn:
        """The next unused line, its actions made on `side` first, or the stop once the script is exhausted.

        Raises:
            RuntimeError: the line acts but no `side` was given (a caller that cannot run the customer's
                calls must not pretend they happened).
        """
        said = sum(1 for m in transcript if m.role == "user")
        if said >= len(task.user.script):
            return UserTurn(content=END_OF_SCRIPT, done=True)
        asked = transcript[-1].content if transcript and transcript[-1].role == "assistant" else ""
        if side is not None:
            _follow_instructions(task, transcript, asked, side)
        if not told(task, said, transcript):
            return UserTurn(content=NOT_TOLD, done=False)
        actions = task.user.actions_at(said)
        if actions:
            if side is None:
                raise RuntimeError(
                    f"task {task.id}: script line {said} acts on the customer's side: pass one"
                )
            for action in actions:
                side.act(action.name, dict(action.arguments))
        return UserTurn(content=task.user.lines[said], done=False)


def _follow_instructions(task: Task, transcript: list[TranscriptMessage], asked: str, side: UserSide) -> None:
    """Make the call of each instruction `asked` gives for the first time, unless the script makes it."""
    earlier = [m.content for m in transcript[:-1] if m.role == "assistant"]
    for call in instructed_calls(task, side.instructions, asked, earlier):
        side.act(call.name, dict(call.arguments))


def instructed_calls(
    task: Task, instructions: Sequence[Instruction], asked: str, earlier: Sequence[str]
) -> list[GoldAction]:
    """The calls the customer makes on hearing `asked`, after the agent's `earlier` messages.

    Each instruction `asked` gives and no earlier message gave, whose call no script line makes and whose
    facts the customer knows (`Instruction.call`).
    """
    scripted = {a.name for line in task.user.script if not isinstance(line, str) for a in line.actions}
    calls = []
    for instruction in instructions:
        if instruction.name in scripted or not _gives(asked, instruction.when_told):
            continue
        if any(_gives(said, instruction.when_told) for said in earlier):
            continue  # followed when first told
        call = instruction.call(task.user.known_info)
        if call is not None:
            calls.append(call)
    return calls


def _gives(message: str, terms: Sequence[str]) -> bool:
    """Whether `message` says every one of `terms` (a line's or an instruction's `when_told`)."""
    return all(communicated(term, [message]) for term in terms)


def told(task: Task, index: int, transcript: list[TranscriptMessage]) -> bool:
    """Whether the agent's last message says every `when_told` term of script line `index` (none: True)."""
    line = task.user.script[index]
    if isinstance(line, str) or not line.actions or not line.when_told:
        return True
    asked = transcript[-1].content if transcript and transcript[-1].role == "assistant" else ""
    return _gives(asked, line.when_told)


def due_actions(task: Task, transcript: list[TranscriptMessage]) -> list[UserAction]:
    """The user-tool calls made by the script line answering the agent's last message, as scripted.

    That line is the one after the customer's messages so far; it acts only once the agent said its
    `when_told` terms. None past the script's end, for a line that only talks, or for one not yet told.
    """
    said = sum(1 for m in transcript if m.role == "user")
    if said >= len(task.user.script) or not told(task, said, transcript):
        return []
    return task.user.actions_at(said)
