"""The deterministic scripted user: says its script's lines in order, each only once the agent earned it.

A line answers what the agent did, not the turn count (`Gate`): a line that tells an identity fact waits
for a message asking for identity details; a line that says yes waits for a proposal naming the change and
its decisive values (`proposes`); a `{say, actions}` line (dual control) waits for a message that is an
answer (short, in the agent's own words) asking for that very action: its `when_told` terms, or else the
phrase of each of its user tools. Until then the customer says a fallback line (`FALLBACKS`), does
nothing, and the line waits: a script is a sequence of answers, so multi-round diagnosis (one fix, then
the next) is written as one acting line per fix.

One fix at a time: a message naming more than one of the customer's fixes (an instruction spray) makes
the customer ask for one thing at a time and act on none.

Whatever line it is at, the customer also follows the domain's `user_instructions` (`Instruction`) the
first time an answer gives one whose call no script line makes: told to restart a router that was never
the problem, a customer restarts it, and the state shows the needless change.

The customer's position in the script is read off the transcript (every user message that is not a
fallback is a line said), so the user stays stateless; `script_turns` replays the same decisions over a
whole transcript, for `POST /v1/score`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from env_server.domain import Domain, Instruction
from env_server.scoring.communicate import communicated
from env_server.scoring.consent import says_yes
from env_server.users.base import STOP_MARK, SimulatedUser, TranscriptMessage, UserSide, UserTurn
from env_server.users.conduct import (
    asks_identity,
    gives_identity,
    instruction_phrases,
    instructions_named,
    is_answer,
    proposes,
)
from shared.tasks import GoldAction, Task

#: What the scripted user says when its script has run out; the conversation is over.
END_OF_SCRIPT = STOP_MARK
#: What the customer says instead of an acting line the agent did not ask for.
NOT_TOLD = "Sorry, I'm not sure what you want me to do on my side. What exactly should I change?"
#: What the customer says instead of identity details nobody asked for.
NOT_ASKED = "Sorry, what do you need from me?"
#: What the customer says instead of a yes to a change nobody proposed (named, with its decisive values).
NOT_PROPOSED = "Before I agree to anything: what exactly will you change, and what will it cost?"
#: What the customer says to a message naming several fixes at once.
ONE_AT_A_TIME = "That's a lot at once. What's the one thing I should do first?"

Gate = Literal["identity", "yes", "act"]
#: The fallback line of each unmet gate.
FALLBACK_OF: dict[Gate, str] = {"identity": NOT_ASKED, "yes": NOT_PROPOSED, "act": NOT_TOLD}
#: Every line the customer says without spending a script line.
FALLBACKS = frozenset({*FALLBACK_OF.values(), ONE_AT_A_TIME})


@dataclass(frozen=True)
class Response:
    """The customer's answer to one agent message.

    The words, the script line said (None: a fallback), and the user-tool calls made first (instructions
    followed, then the line's own actions).
    """

    content: str
    line: int | None
    calls: list[GoldAction] = field(default_factory=list)
    done: bool = False


class ScriptedUser(SimulatedUser):
    """Says the script's lines in order, each once the agent's message earns it; then the user is done.

    Args:
        domain_of: the domain of a task, by name (its conduct decides what a message earns).
    """

    kind = "scripted"
    prompt_version = "scripted-v2"

    def __init__(self, domain_of: Callable[[str], Domain]) -> None:
        self._domain_of = domain_of

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
        """The answer to the agent's last message, its calls made on `side` first (see the module doc).

        Raises:
            RuntimeError: the answer acts but no `side` was given (a caller that cannot run the customer's
                calls must not pretend they happened).
        """
        domain = self._domain_of(task.domain)
        said = [m.content for m in transcript if m.role == "assistant"]
        response = respond(task, domain, position(transcript), said[-1] if said else "", said[:-1])
        if response.calls and side is None:
            raise RuntimeError(f"task {task.id}: the customer acts on their side here: pass one")
        for call in response.calls:
            assert side is not None
            side.act(call.name, dict(call.arguments))
        return UserTurn(content=response.content, done=response.done)


def position(transcript: Sequence[TranscriptMessage]) -> int:
    """How many script lines the customer has said: every user message but the fallbacks."""
    return sum(1 for m in transcript if m.role == "user" and m.content not in FALLBACKS)


def respond(task: Task, domain: Domain, at: int, asked: str, earlier: Sequence[str]) -> Response:
    """What the customer, having said `at` lines, answers to `asked` after the agent's `earlier` messages."""
    if at >= len(task.user.script):
        return Response(END_OF_SCRIPT, None, done=True)
    if len(instructions_named(asked, domain)) > 1:
        return Response(ONE_AT_A_TIME, None)
    followed = (
        instructed_calls(task, domain.user_instructions, asked, earlier) if is_answer(asked, domain) else []
    )
    gate = unmet(task, domain, at, asked)
    if gate is not None:
        return Response(FALLBACK_OF[gate], None, followed)
    own = [GoldAction(name=a.name, arguments=a.arguments, actor="user") for a in task.user.actions_at(at)]
    return Response(task.user.lines[at], at, followed + own)


def unmet(task: Task, domain: Domain, index: int, asked: str) -> Gate | None:
    """The first gate of script line `index` that the agent's message `asked` does not meet (None: said)."""
    words = task.user.lines[index]
    if gives_identity(words, task, domain) and not asks_identity(asked, domain):
        return "identity"
    if says_yes(words) and not proposes(asked, task, domain):
        return "yes"
    if task.user.actions_at(index) and not (told(task, domain, index, asked) and is_answer(asked, domain)):
        return "act"
    return None


def told(task: Task, domain: Domain, index: int, asked: str) -> bool:
    """Whether `asked` asks for acting line `index`'s actions: its `when_told` terms, else its tools'."""
    line = task.user.script[index]
    if isinstance(line, str) or not line.actions:
        return True
    if line.when_told:
        return _gives(asked, line.when_told)
    phrases = instruction_phrases(domain)
    return all(_gives(asked, [phrases.get(a.name, a.name.replace("_", " "))]) for a in line.actions)


def _gives(message: str, terms: Sequence[str]) -> bool:
    """Whether `message` says every one of `terms` (a line's or an instruction's `when_told`)."""
    return all(communicated(term, [message]) for term in terms)


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


def script_turns(task: Task, domain: Domain, agent_messages: Sequence[str]) -> list[Response]:
    """The scripted customer's answer to each of the agent's messages in turn, as a live episode plays it.

    Stops after the answer that ends the conversation.
    """
    responses: list[Response] = []
    at = 1
    for i, asked in enumerate(agent_messages):
        response = respond(task, domain, at, asked, agent_messages[:i])
        responses.append(response)
        if response.done:
            break
        at += response.line is not None
    return responses


def due_actions(task: Task, transcript: list[TranscriptMessage]) -> list[GoldAction]:
    """The calls a guided LLM user is made to make: the script line at its turn, once told.

    The LLM customer has no script position of its own: its k-th message stands for line k, whose calls
    are due once the agent's last message says the line's `when_told` terms.
    """
    said = sum(1 for m in transcript if m.role == "user")
    if said >= len(task.user.script):
        return []
    line = task.user.script[said]
    asked = transcript[-1].content if transcript and transcript[-1].role == "assistant" else ""
    if isinstance(line, str) or not _gives(asked, line.when_told):
        return []
    return [GoldAction(name=a.name, arguments=a.arguments, actor="user") for a in line.actions]
