"""The simulated-user seam: whatever plays the customer answers the agent's messages through this."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from env_server.domain import Instruction
from shared.models import ToolCallResult
from shared.tasks import Task


@dataclass(frozen=True)
class CustomerAct:
    """A call the customer made on their own side (dual control), as they remember it, with its result."""

    name: str
    arguments: dict[str, Any]
    output: Any = None
    error: str | None = None


@dataclass(frozen=True)
class TranscriptMessage:
    """One message of the conversation as the user sees it (never the agent's tool calls or outputs).

    `did` holds the customer's own calls made just before saying a user message (dual control), so a
    model playing the customer remembers, turns later, that it already restarted the router.
    """

    role: Literal["user", "assistant"]
    content: str
    did: tuple[CustomerAct, ...] = ()


#: What a simulated user says to end the conversation: the marker, never a message anyone reads.
STOP_MARK = "###STOP###"


@dataclass(frozen=True)
class UserTurn:
    """The user's reply; `done` ends the conversation (goal met, refused, or turn cap reached)."""

    content: str
    done: bool

    @property
    def words(self) -> str:
        """What the user said: `content`, or "" when the user ended the conversation without a word.

        A bare stop is the end of the conversation, an event of its own, never a user message.
        """
        return "" if self.done and self.content.strip() == STOP_MARK else self.content


class UserSide(Protocol):
    """The customer's own side of an episode (dual control): the user tools, and a way to call them.

    The episode service hands one to the user with each reply; each call runs in the episode's sandbox and
    is recorded as a `user_tool_call` event. Validation's conversations hand one that writes the call down
    in the trajectory instead, to replay it in order with the agent's calls.

    `instructions` are the domain's `user_instructions`: what the scripted customer does whenever told.
    """

    instructions: Sequence[Instruction]

    def tools(self) -> list[dict[str, Any]]:
        """The user tools as OpenAI `tools` entries (empty when the domain has none)."""
        ...

    def act(self, name: str, arguments: dict[str, Any]) -> ToolCallResult:
        """Call user tool `name`; an unknown tool or bad arguments come back as the result's `error`."""
        ...


class SimulatedUser(ABC):
    """Plays the customer of a task. Stateless: everything it needs is the task and the transcript."""

    #: "scripted" or "llm"; recorded with every episode and score.
    kind: str
    #: The model behind the user ("" for scripted users).
    model: str = ""
    #: Version of the prompt (or script semantics), recorded with every episode and score.
    prompt_version: str = ""
    #: Whether its turns wait on a network (an LLM endpoint): then they never run on the event loop.
    waits: bool = False

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the user's connections (called when the server stops)."""

    @abstractmethod
    def opening(self, task: Task, seed: int | None = None) -> UserTurn:
        """The user's first message; `seed` is the episode's sampling seed (None: the user's default)."""

    @abstractmethod
    def reply(
        self,
        task: Task,
        transcript: list[TranscriptMessage],
        writes_this_turn: int,
        seed: int | None = None,
        side: UserSide | None = None,
    ) -> UserTurn:
        """Answer the agent's last message (the last entry of `transcript`), acting on `side` if need be.

        Args:
            task: the task being played.
            transcript: the conversation so far, oldest first, ending with the agent's message.
            writes_this_turn: write tool calls the agent made since the user's previous message (lets an
                LLM user refuse a premature stop while an announced write is still missing).
            seed: the episode's sampling seed (`StartEpisodeRequest.seed`); None keeps the user's default.
            side: the customer's own side, where the user's tool calls run (None: a caller with no sandbox;
                a user that must act then raises `RuntimeError`).
        """
