"""What scoring reads of an episode: its messages and tool calls, in the order they happened.

The order matters to two checks: a `communicate` fact the user said before the agent did is an echo, not an
answer, and a write the policy wants consented to must come after the user's yes. A live episode knows its
order from its event log; a trajectory submitted to `POST /v1/score` gives it by carrying its calls inside
the assistant messages (OpenAI `tool_calls`). One given as separate lists is *unordered*: it is read as
every call first, then the conversation (see `Trajectory.unordered`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    """Something the agent told the user, or the user told the agent."""

    role: Role
    content: str


@dataclass(frozen=True)
class Call:
    """A tool call as it ran: `error` is set when it was refused (and so changed nothing)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    output: Any = None
    error: str | None = None

    @property
    def ran(self) -> bool:
        """Whether the call went through (a refused call changed nothing)."""
        return self.error is None


@dataclass(frozen=True)
class CustomerCall:
    """A call the customer made on their own side (a user tool, dual control): never the agent's.

    It is a step so that whatever replays the episode (per-call credit) runs it in its place; the checks
    that read the agent's calls (`Trajectory.calls()`) never see it.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ran(self) -> bool:
        """Whether the call went through (a refused call changed nothing)."""
        return self.error is None


Step = Message | Call | CustomerCall


@dataclass(frozen=True)
class Trajectory:
    """An episode's steps in order; `ordered` is False when the order of calls and messages is unknown."""

    steps: tuple[Step, ...] = ()
    ordered: bool = True

    @classmethod
    def of(cls, steps: Iterable[Step]) -> Trajectory:
        """An ordered trajectory of `steps`."""
        return cls(tuple(steps))

    @classmethod
    def unordered(cls, calls: Iterable[Call | CustomerCall], messages: Iterable[Message]) -> Trajectory:
        """Calls and messages whose relative order is unknown: read as every call first, then the talk.

        That reading never helps an agent: a write the policy wants consented to comes before any yes.
        """
        return cls((*calls, *messages), ordered=False)

    def messages(self, role: Role | None = None) -> list[Message]:
        """The messages (of one role, if given), in order."""
        return [s for s in self.steps if isinstance(s, Message) and (role is None or s.role == role)]

    def calls(self) -> list[Call]:
        """The agent's tool calls, in order."""
        return [s for s in self.steps if isinstance(s, Call)]

    def chat(self) -> list[dict[str, str]]:
        """The conversation as chat messages (`role`, `content`), as the judge reads it."""
        return [{"role": m.role, "content": m.content} for m in self.messages()]


def conversation(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Chat messages (`{role, content}`) as `Message`s: user and assistant text only, in order."""
    return [
        Message(m["role"], m["content"])
        for m in messages
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str) and m["content"]
    ]
