"""An episode's event log, read the one way every consumer needs it.

The simulated user and the judge read the transcript, scoring reads the tool calls, a restart replays the
successful ones: all of it is derived here from the typed events the store returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from env_server.domain import Domain
from env_server.scoring.trajectory import Call, CustomerCall, Message, Step, Trajectory
from env_server.store.events import (
    AssistantMessageEvent,
    LoggedEvent,
    ToolCallEvent,
    UserMessageEvent,
    UserToolCallEvent,
)
from env_server.users.base import CustomerAct, TranscriptMessage


@dataclass(frozen=True)
class EpisodeLog:
    """The events of one episode, in order."""

    events: Sequence[LoggedEvent]

    def transcript(self) -> list[TranscriptMessage]:
        """The conversation as the user saw it: messages, never the agent's tool calls.

        Each user message carries the customer's own calls made since the message before it (`did`).
        """
        out: list[TranscriptMessage] = []
        acts: list[CustomerAct] = []
        for e in self.events:
            event = e.event
            if isinstance(event, UserToolCallEvent):
                acts.append(CustomerAct(event.name, dict(event.arguments), event.output, event.error))
            elif isinstance(event, UserMessageEvent):
                out.append(TranscriptMessage("user", event.content, tuple(acts)))
                acts = []
            elif isinstance(event, AssistantMessageEvent):
                out.append(TranscriptMessage("assistant", event.content))
        return out

    def chat(self) -> list[dict[str, str]]:
        """The transcript as chat messages (`role`, `content`), as scoring and the judge read it."""
        return [{"role": m.role, "content": m.content} for m in self.transcript()]

    def trajectory(self) -> Trajectory:
        """Messages and tool calls in the order they happened, as scoring reads them."""
        steps: list[Step] = []
        for e in self.events:
            event = e.event
            if isinstance(event, UserMessageEvent | AssistantMessageEvent):
                steps.append(
                    Message("user" if isinstance(event, UserMessageEvent) else "assistant", event.content)
                )
            elif isinstance(event, ToolCallEvent):
                steps.append(Call(event.name, event.arguments, event.output, event.error))
            elif isinstance(event, UserToolCallEvent):
                steps.append(CustomerCall(event.name, event.arguments, event.error))
        return Trajectory.of(steps)

    def tool_calls(self) -> list[ToolCallEvent]:
        """Every tool call, refused ones included."""
        return [e.event for e in self.events if isinstance(e.event, ToolCallEvent)]

    def replayable_calls(self) -> list[tuple[int, ToolCallEvent | UserToolCallEvent]]:
        """The calls that changed or read the sandbox (not refused), with their sequence numbers.

        The customer's own calls (`UserToolCallEvent`, dual control) are among them, in their place: the
        sandbox holds both sides.
        """
        return [
            (e.seq, e.event)
            for e in self.events
            if isinstance(e.event, ToolCallEvent | UserToolCallEvent) and e.event.error is None
        ]

    def user_calls(self) -> list[UserToolCallEvent]:
        """The customer's own tool calls (dual control), refused ones included."""
        return [e.event for e in self.events if isinstance(e.event, UserToolCallEvent)]

    def writes_since_user(self, domain: Domain) -> int:
        """Successful write calls since the user's last message (for the premature-stop guard)."""
        count = 0
        for e in reversed(self.events):
            if isinstance(e.event, UserMessageEvent):
                break
            if isinstance(e.event, ToolCallEvent) and e.event.error is None:
                tool = domain.tools_by_name.get(e.event.name)
                count += int(tool is not None and tool.kind == "write")
        return count
