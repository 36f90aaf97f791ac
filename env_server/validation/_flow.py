"""The canonical policy-following conversation of a task, as validation plays it.

A policy-following agent hears the opening, asks for the caller's identity facts until it has them, makes
its reads and the identity check, tells the user what it found (the task's reference reply, when it is said
before any change) or proposes the change, waits for an explicit yes, makes the changes, and reports (the
reference reply, when it is said after the changes). The scripted user answers each message with its next
line. `honest_script` writes that conversation down, interleaved with the calls, for a given list of calls:
the gold, a variant of it, or a hack's.

In a dual-control task the customer also acts: a `{say, actions}` line's user-tool calls go into the
conversation (as `actor: user` calls) right before the words, when the scripted user says that line. The
gold's own `actor: user` calls are the script's to make, never the agent's: the agent plays only its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Domain, Instruction
from env_server.scoring.communicate import communicated
from env_server.scoring.consent import says_yes
from env_server.scoring.trajectory import Message
from env_server.users.base import TranscriptMessage
from env_server.users.scripted import ScriptedUser
from shared.models import ToolCallResult
from shared.tasks import GoldAction, Task

#: What the canonical agent says, where the task gives it no words of its own.
IDENTITY_ASK = "To verify your identity, could you give me the details we hold on file for you?"
PROPOSAL = "Here is exactly what I will do and what it costs. Shall I go ahead?"
REPORT = "Done: that is all taken care of."

Line = Message | GoldAction


@dataclass(frozen=True)
class Needs:
    """What the policy needs from the user before the gold's writes."""

    identity_facts: tuple[str, ...]  # values the caller must give (empty: no identity check)
    yes: bool  # an explicit yes before a write
    problems: tuple[str, ...]  # gold orderings the policy forbids


def is_write(domain: Domain, action: GoldAction) -> bool:
    """Whether `action` is the agent's and calls one of the domain's (agent) write tools."""
    tool = domain.tools_by_name.get(action.name)
    return action.actor == "agent" and tool is not None and tool.kind == "write"


def agent_actions(actions: Sequence[GoldAction]) -> list[GoldAction]:
    """The agent's calls among `actions` (the customer's own are their script's to make)."""
    return [a for a in actions if a.actor == "agent"]


@dataclass
class ScriptSide:
    """Validation's `UserSide`: the scripted customer's calls written into the conversation, not run.

    The conversation is replayed afterwards in one sandbox (`Replayer.play`), calls in order, so a call
    written here runs in its place. `skip` holds the ordinals (over the whole script) of calls the customer
    leaves undone, to prove that each of them matters.
    """

    lines: list[Line]
    skip: frozenset[int] = frozenset()
    instructions: Sequence[Instruction] = ()
    made: int = 0

    def tools(self) -> list[dict[str, Any]]:
        """None to offer: the scripted customer reads no tool list, its script names each call."""
        return []

    def act(self, name: str, arguments: dict[str, Any]) -> ToolCallResult:
        """Write the call down (unless skipped); its result exists only once the conversation is replayed."""
        if self.made not in self.skip:
            self.lines.append(GoldAction(name=name, arguments=arguments, actor="user"))
        self.made += 1
        return ToolCallResult(name=name)


def needs_yes(domain: Domain, action: GoldAction) -> bool:
    """Whether `action` is a write the domain's conduct wants an explicit yes for."""
    return is_write(domain, action) and domain.conduct.needs_yes(action.name)


def needs(task: Task, domain: Domain, actions: Sequence[GoldAction] | None = None) -> Needs:
    """Derive from the calls (the gold by default) and the domain's conduct what the script must give."""
    conduct = domain.conduct
    facts: list[str] = []
    problems = []
    verified = False
    for i, action in enumerate(task.gold_actions if actions is None else actions):
        if action.name == conduct.identity_tool:
            verified = True
            facts += [
                str(v) for k, v in action.arguments.items() if not k.endswith("_id") and str(v) not in facts
            ]
        elif is_write(domain, action) and conduct.needs_identity(action.name) and not verified:
            problems.append(f"gold write #{i} {action.name} comes before {conduct.identity_tool}")
    yes = any(needs_yes(domain, a) for a in (task.gold_actions if actions is None else actions))
    return Needs(tuple(facts), yes, tuple(problems))


@dataclass
class Conversation:
    """A conversation with the scripted user, written down as it goes (calls interleaved).

    `skip_user_actions`: ordinals of the customer's script actions left undone (see `ScriptSide`);
    `instructions`: the domain's `user_instructions`, which the customer follows whenever told.
    """

    task: Task
    instructions: Sequence[Instruction] = ()
    lines: list[Line] = field(default_factory=list)
    over: bool = False
    consented: bool = False  # the user said an explicit yes to a proposal
    reported: bool = False  # the agent's last message got an answer
    skip_user_actions: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        self._user = ScriptedUser()
        self._side = ScriptSide(self.lines, self.skip_user_actions, self.instructions)
        self.lines.append(Message("user", self._user.opening(self.task).content))

    @property
    def heard(self) -> list[str]:
        """What the user has said so far."""
        return [line.content for line in self.lines if isinstance(line, Message) and line.role == "user"]

    def say(self, text: str, *, proposal: bool = False, force: bool = False) -> str | None:
        """The agent says `text`; returns the user's answer, or None once the user has ended it.

        An explicit yes to a `proposal` is the user's consent. After the end only `force` still says it
        (as `POST /v1/score` lets a trajectory do).
        """
        if self.over and not force:
            return None
        self.lines.append(Message("assistant", text))
        if self.over:
            return None
        transcript = [TranscriptMessage(m.role, m.content) for m in self.lines if isinstance(m, Message)]
        turn = self._user.reply(self.task, transcript, writes_this_turn=0, side=self._side)
        if turn.done:
            self.over = True
            return None
        self.lines.append(Message("user", turn.content))
        self.consented = self.consented or (proposal and says_yes(turn.content))
        return turn.content

    def act(self, actions: Sequence[GoldAction]) -> None:
        """The agent makes these calls: all of them are the agent's, whatever actor they name.

        An agent cannot act on the customer's side, so a hack that "calls" a user tool makes an agent call
        of that name, refused as an unknown tool.
        """
        self.lines.extend(a.model_copy(update={"actor": "agent"}) for a in actions)


def honest_script(
    task: Task,
    domain: Domain,
    actions: Sequence[GoldAction],
    reply: str | None = None,
    reply_after_writes: bool = False,
    skip_user_actions: frozenset[int] = frozenset(),
) -> Conversation:
    """The canonical conversation around `actions`, telling `reply` before the changes or after them.

    The agent makes the agent's calls among `actions`; the customer makes theirs as the script says, except
    the ones `skip_user_actions` leaves undone.
    """
    need = needs(task, domain)
    actions = agent_actions(actions)
    talk = Conversation(task, domain.user_instructions, skip_user_actions=skip_user_actions)
    while not talk.over and missing_facts(need, talk.heard):
        talk.say(IDENTITY_ASK)
    first = next((i for i, a in enumerate(actions) if needs_yes(domain, a)), len(actions))
    talk.act(actions[:first])
    if reply is not None and not reply_after_writes:
        talk.say(reply, proposal=True)
    if first < len(actions) or need.yes:
        while not talk.consented and not talk.over:
            talk.say(PROPOSAL, proposal=True)
    talk.act(actions[first:])
    if reply is not None and not reply_after_writes and first == len(actions):
        talk.reported = _answered_last(talk)
        return talk  # the reply told everything and nothing was changed after it: it was the report
    talk.reported = talk.say(reply if reply is not None and reply_after_writes else REPORT) is not None
    return talk


def _answered_last(talk: Conversation) -> bool:
    """Whether the agent's last message got an answer from the user."""
    said = [line for line in talk.lines if isinstance(line, Message)]
    return len(said) > 1 and said[-1].role == "user" and said[-2].role == "assistant"


def missing_facts(need: Needs, heard: list[str]) -> list[str]:
    """The identity facts the user has not given yet."""
    return [f for f in need.identity_facts if not any(communicated(f, [h]) for h in heard)]
