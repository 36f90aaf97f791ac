"""The episode event log's entries, typed: one model per kind, stored as `kind` plus a JSON payload.

The payload is the model's fields without `kind`, exactly as the store has always held them, so existing
stores load unchanged and the API shows the same payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from env_server.errors import GroundstateError
from shared.models import EpisodeEvent, ToolCallResult


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def payload(self) -> dict[str, Any]:
        """What the store's `payload` column holds (every field but `kind`, as JSON)."""
        return self.model_dump(mode="json", exclude={"kind"})


class UserMessageEvent(_Event):
    """The simulated user spoke.

    `done` is how stores before `conversation_end` marked the user's last message; new episodes record the
    end as a `ConversationEndEvent` and leave it false.
    """

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


class RejectedToolCallEvent(_Event):
    """A tool call refused before it ran (unknown tool, invalid arguments): the agent's mistake, on record.

    Nothing ran and the sandbox is untouched, so replay and scoring skip it; the episode view shows it.
    """

    kind: Literal["rejected_tool_call"] = "rejected_tool_call"
    name: str
    call_id: str | None = None
    arguments: dict[str, Any]
    code: str = Field(description="The error's code: `unknown-tool` or `invalid-arguments`.")
    error: str = Field(description="The message the agent got.")
    field: str | None = None

    @classmethod
    def of(cls, name: str, call_id: str | None, arguments: dict[str, Any], exc: GroundstateError) -> Self:
        """The event recording a call refused with `exc` (NUL characters, refused by PostgreSQL, escaped)."""
        return cls(
            name=_printable(name),
            call_id=call_id,
            arguments=_printable(arguments),
            code=exc.code,
            error=_printable(exc.message),
            field=exc.field,
        )


class UserToolCallEvent(_Event):
    """The simulated customer called one of the domain's user tools on their own side (dual control).

    An environment event, like the customer's words: the agent never made it and never sees it (it hears
    what the customer says about it). Replay runs it in order with the agent's calls, so a rebuilt sandbox
    holds both sides. A call the tool refused or could not take (`error`) changed nothing.
    """

    kind: Literal["user_tool_call"] = "user_tool_call"
    name: str
    arguments: dict[str, Any]
    output: Any = None
    error: str | None = None

    @classmethod
    def of(cls, name: str, arguments: dict[str, Any], output: Any = None, error: str | None = None) -> Self:
        """The event recording the customer's call (NUL characters, refused by PostgreSQL, escaped)."""
        return cls(
            name=_printable(name),
            arguments=_printable(arguments),
            output=output,
            error=None if error is None else _printable(error),
        )


class ConversationEndEvent(_Event):
    """The conversation ended: the simulated user said its last (the end is an event, never a message)."""

    kind: Literal["conversation_end"] = "conversation_end"
    by: Literal["user"] = "user"


def _printable(value: Any) -> Any:
    r"""`value` with NUL characters spelt `\u0000` (a JSON column on PostgreSQL refuses a real NUL)."""
    if isinstance(value, str):
        return value.replace("\x00", "\\u0000")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


class BackendErrorEvent(_Event):
    """Infrastructure failed mid-episode (never the agent's fault)."""

    kind: Literal["backend_error"] = "backend_error"
    error: str


Event = Annotated[
    UserMessageEvent
    | AssistantMessageEvent
    | ToolCallEvent
    | RejectedToolCallEvent
    | UserToolCallEvent
    | ConversationEndEvent
    | BackendErrorEvent,
    Field(discriminator="kind"),
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
        # the store keeps UTC without a zone; the wire says it (RFC 3339, as the schema's date-time requires)
        created_at = self.created_at if self.created_at.tzinfo else self.created_at.replace(tzinfo=UTC)
        return EpisodeEvent(
            seq=self.seq, kind=self.event.kind, payload=self.event.payload(), created_at=created_at
        )
