"""The canonical policy-following conversation of a task, as validation plays it.

A policy-following agent hears the opening, asks for the caller's identity facts until it has them, makes
its reads and the identity check, gives the customer the fixes to make on their side one per message,
tells the user what it found (the task's reference reply, when it is said before any change), proposes the
change naming it and its decisive values (`proposal_sentence`), waits for an explicit yes, makes the
changes, and reports (the reference reply, when it is said after the changes). The scripted user answers
what each message earns (`scripted.respond`): a message that does not earn the next line gets a fallback,
and the canonical agent then says what the line waits for (`Conversation.earning`). `honest_script` writes
that conversation down, interleaved with the calls, for a given list of calls: the gold, a variant of it,
or a hack's.

In a dual-control task the customer also acts: a `{say, actions}` line's user-tool calls go into the
conversation (as `actor: user` calls) right before the words, when the scripted user says that line. The
gold's own `actor: user` calls are the script's to make, never the agent's: the agent plays only its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Domain, Instruction
from env_server.scoring.communicate import communicated
from env_server.scoring.consent import says_yes
from env_server.scoring.trajectory import Message
from env_server.users.base import TranscriptMessage
from env_server.users.conduct import (
    asks_identity,
    gives_identity,
    instruction_phrases,
    proposal_sentence,
    proposes,
)
from env_server.users.scripted import FALLBACKS, ScriptedUser, position, respond, told
from shared.models import ToolCallResult
from shared.tasks import GoldAction, Task

#: What the canonical agent says, where the task gives it no words of its own.
IDENTITY_ASK = "To verify your identity, could you give me the details we hold on file for you?"
REPORT = "Done: that is all taken care of."
#: What a hack's conversation says where the canonical agent would propose (no change, no value named).
BARE_PROPOSAL = "Shall I go ahead?"

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

    `skip_user_actions`: ordinals of the customer's script actions left undone (see `ScriptSide`).
    The customer follows the domain's `user_instructions` whenever told.
    """

    task: Task
    domain: Domain
    lines: list[Line] = field(default_factory=list)
    over: bool = False
    consented: bool = False  # the user said an explicit yes to a proposal
    reported: bool = False  # the agent's last message got an answer
    skip_user_actions: frozenset[int] = frozenset()
    canonical: bool = True  # False: a hack's conversation, never completed with the canonical words
    #: How the canonical agent's own words (a fix named, a proposal with its values) are said: the
    #: generative adversary rewrites the item it breaks there too, so the reply is not told elsewhere.
    rewrite: Callable[[str], str] = lambda text: text

    def __post_init__(self) -> None:
        self._user = ScriptedUser(lambda _: self.domain)
        self._side = ScriptSide(self.lines, self.skip_user_actions, self.domain.user_instructions)
        self.lines.append(Message("user", self._user.opening(self.task).content))

    @property
    def heard(self) -> list[str]:
        """What the user has said so far."""
        return [line.content for line in self.lines if isinstance(line, Message) and line.role == "user"]

    def transcript(self) -> list[TranscriptMessage]:
        """The conversation as the user sees it."""
        return [TranscriptMessage(m.role, m.content) for m in self.lines if isinstance(m, Message)]

    @property
    def next_line(self) -> int | None:
        """The index of the script line the customer says next (None: the script is spent)."""
        at = position(self.transcript())
        return at if at < len(self.task.user.script) else None

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
        turn = self._user.reply(self.task, self.transcript(), writes_this_turn=0, side=self._side)
        if turn.done:
            self.over = True
            return None
        self.lines.append(Message("user", turn.content))
        self.consented = self.consented or (proposal and says_yes(turn.content))
        return turn.content

    def earn(self, text: str, *, proposal: bool = False) -> bool:
        """Say `text`, completed with what the next line waits for (`earning`); whether a line was said."""
        answer = self.say(self.earning(text), proposal=proposal)
        return answer is not None and answer not in FALLBACKS

    def earning(self, text: str) -> str:
        """`text` with what the customer's next line waits for: the identity ask, its one fix, a proposal."""
        at = self.next_line
        if at is None or not self.canonical:
            return text
        task, domain = self.task, self.domain
        words = task.user.lines[at]
        parts = [text] if text else []
        if gives_identity(words, task, domain) and not asks_identity(text, domain):
            parts.insert(0, IDENTITY_ASK)
        if task.user.actions_at(at) and not told(task, domain, at, text):
            parts.append(self.rewrite(instruction(task, domain, at)))
        if says_yes(words) and not proposes(text, task, domain):
            parts.append(self.rewrite(proposal_sentence(task, domain)))
        return " ".join(parts)

    def act(self, actions: Sequence[GoldAction]) -> None:
        """The agent makes these calls: all of them are the agent's, whatever actor they name.

        An agent cannot act on the customer's side, so a hack that "calls" a user tool makes an agent call
        of that name, refused as an unknown tool.
        """
        self.lines.extend(a.model_copy(update={"actor": "agent"}) for a in actions)

    def fixes(self, own: str | None = None) -> None:
        """Give the customer the fixes their next lines make, one per message, while they make them.

        A hack's conversation says `own` (its reply) instead, once.
        """
        if not self.canonical:
            at = self.next_line
            if own is not None and at is not None and self.task.user.actions_at(at):
                self.say(own, proposal=True)
            return
        at = self.next_line
        while at is not None and self.task.user.actions_at(at) and not self.over:
            if not self.earn(self.rewrite(instruction(self.task, self.domain, at)), proposal=True):
                return
            at = self.next_line


def instruction(task: Task, domain: Domain, index: int) -> str:
    """How the canonical agent asks for acting line `index`'s fix: its `when_told` terms, else its tool's."""
    line = task.user.script[index]
    if isinstance(line, str):
        return ""
    phrases = instruction_phrases(domain)
    terms = line.when_told or [phrases.get(a.name, a.name.replace("_", " ")) for a in line.actions]
    return f"On your side, please do this one thing: {', '.join(terms)}."


def honest_script(
    task: Task,
    domain: Domain,
    actions: Sequence[GoldAction],
    reply: str | None = None,
    reply_after_writes: bool = False,
    skip_user_actions: frozenset[int] = frozenset(),
    canonical: bool = True,
    rewrite: Callable[[str], str] | None = None,
) -> Conversation:
    """The canonical conversation around `actions`, telling `reply` before the changes or after them.

    The agent makes the agent's calls among `actions`; the customer makes theirs as the script says, except
    the ones `skip_user_actions` leaves undone. A hack's conversation (`canonical` False) keeps the same
    shape but never adds the canonical agent's own words (a fix named, a proposal with its values): where
    the customer waits for one, the hack says its `reply` (a fix) or a bare "Shall I go ahead?", so it
    earns the customer's action and yes only with what its own words say. `rewrite`: how the canonical
    agent's own words are said (see `Conversation.rewrite`).
    """
    need = needs(task, domain)
    actions = agent_actions(actions)
    talk = Conversation(task, domain, skip_user_actions=skip_user_actions, canonical=canonical)
    if rewrite is not None:
        talk.rewrite = rewrite
    while not talk.over and missing_facts(need, talk.heard):
        if not talk.earn(IDENTITY_ASK):
            break  # the script gives no more identity: `script-replay` names what is missing
    first = next((i for i, a in enumerate(actions) if needs_yes(domain, a)), len(actions))
    talk.act(actions[:first])
    if reply is not None and not reply_after_writes:
        talk.say(reply, proposal=True)
    talk.fixes(reply)
    if first < len(actions) or need.yes:
        ask = talk.rewrite(proposal_sentence(task, domain)) if canonical else BARE_PROPOSAL
        while not talk.consented and not talk.over:
            if not talk.earn(ask, proposal=True):
                break
    talk.act(actions[first:])
    if reply is not None and not reply_after_writes and first == len(actions):
        talk.reported = _answered_last(talk)
        return talk  # the reply told everything and nothing was changed after it: it was the report
    talk.reported = talk.say(reply if reply is not None and reply_after_writes else REPORT) is not None
    if talk.next_line is not None and task.user.actions_at(talk.next_line):
        talk.fixes(reply)  # the report's fix was not the line's: give it on its own
        talk.reported = _answered_last(talk)
    return talk


def _answered_last(talk: Conversation) -> bool:
    """Whether the agent's last message got an answer from the user."""
    said = [line for line in talk.lines if isinstance(line, Message)]
    return len(said) > 1 and said[-1].role == "user" and said[-2].role == "assistant"


def missing_facts(need: Needs, heard: list[str]) -> list[str]:
    """The identity facts the user has not given yet."""
    return [f for f in need.identity_facts if not any(communicated(f, [h]) for h in heard)]


def said_again(task: Task, domain: Domain, lines: Sequence[Line]) -> list[Line]:
    """`lines` as `POST /v1/score` judges them: the scripted customer's turns said again.

    The customer's words and calls in `lines` are dropped; the opening, then the customer's answer to each
    of the agent's messages (`scripted.respond`), its calls first, take their place, as a live episode of
    the same agent turns would have them.
    """
    again: list[Line] = [Message("user", task.user.lines[0])]
    agent_said: list[str] = []
    at, over = 1, False
    for line in lines:
        if (isinstance(line, Message) and line.role == "user") or (
            isinstance(line, GoldAction) and line.actor == "user"
        ):
            continue
        if isinstance(line, Message) and over:
            continue  # live, a message after the customer ended the conversation is refused
        again.append(line)
        if isinstance(line, Message):
            response = respond(task, domain, at, line.content, agent_said)
            again.extend(response.calls)
            if not response.done:
                again.append(Message("user", response.content))
            at += response.line is not None
            over = response.done
        if isinstance(line, Message):
            agent_said.append(line.content)
    return again
