"""The episode event log's entries, typed: one model per kind, stored as `kind` plus a JSON payload.

The payload is the model's fields without `kind`, exactly as the store has always held them, so existing
stores load unchanged and the API shows the same payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from shared.models import EpisodeEvent, ToolCallResult


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def payload(self) -> dict[str, Any]:
        """What the store's `payload` column holds (every field but `kind`, as JSON)."""
        return self.model_dump(mode="json", exclude={"kind"})


class UserMessageEvent(_Event):
    """The simulated user spoke; `done` means it ended the conversation."""

    kind: Literal["user_message"] = "user_message"
    content: str
    done: bool = False


class AssistantMessageEvent(_Event):
    """The agent spoke to the user."""

    kind: Literal["assistant_message"] = "assistant_message"
    content: str


class ToolCallEvent(_Event):
    """A tool call the server ran: the result the agent got (output or refusal) and the arguments."""

    kind: Literal["tool_call"] = "tool_call"
    name: str
    call_id: str | None = None
    output: Any = None
    error: str | None = None
    arguments: dict[str, Any]

    @classmethod
    def of(cls, result: ToolCallResult, arguments: dict[str, Any]) -> ToolCallEvent:
        """The event recording `result` of a call with `arguments`."""
        return cls(**result.model_dump(), arguments=arguments)

    def result(self) -> ToolCallResult:
        """The result the agent got."""
        return ToolCallResult(name=self.name, call_id=self.call_id, output=self.output, error=self.error)


class BackendErrorEvent(_Event):
    """Infrastructure failed mid-episode (never the agent's fault)."""

    kind: Literal["backend_error"] = "backend_error"
    error: str


Event = Annotated[
    UserMessageEvent | AssistantMessageEvent | ToolCallEvent | BackendErrorEvent, Field(discriminator="kind")
]
_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(kind: str, payload: dict[str, Any]) -> Event:
    """The typed event of a stored `kind` and `payload`."""
    return _EVENT.validate_python({**payload, "kind": kind})


@dataclass(frozen=True)
class LoggedEvent:
    """An event as the log holds it: its place in the episode and when it was written."""

    seq: int
    created_at: datetime
    event: Event

    def wire(self) -> EpisodeEvent:
        """The event as the API shows it."""
        return EpisodeEvent(
            seq=self.seq, kind=self.event.kind, payload=self.event.payload(), created_at=self.created_at
        )
