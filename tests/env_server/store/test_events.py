"""Typed episode events: the payloads stores already hold load, and are written back byte for byte."""

from datetime import datetime

import pytest
from pydantic import ValidationError

from env_server.episodes.log import EpisodeLog
from env_server.store.events import (
    AssistantMessageEvent,
    BackendErrorEvent,
    LoggedEvent,
    ToolCallEvent,
    UserMessageEvent,
    parse_event,
)
from shared.models import ToolCallResult

# Payloads as the server has written them since the store's first migration (kind, payload column).
STORED = [
    ("user_message", {"content": "Hi, I need to cancel booking BK-1.", "done": False}),
    ("assistant_message", {"content": "Could you confirm your name?"}),
    (
        "tool_call",
        {"name": "get_booking", "call_id": "c1", "output": {"id": "BK-1", "total": "12.50"}, "error": None,
         "arguments": {"booking_id": "BK-1"}},
    ),
    (
        "tool_call",
        {"name": "cancel_booking", "call_id": None, "output": None, "error": "identity not verified",
         "arguments": {"booking_id": "BK-1"}},
    ),
    ("user_message", {"content": "Thanks, bye.", "done": True}),
    ("backend_error", {"error": "the sandbox database went away"}),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "payload"), STORED)
def test_a_stored_payload_parses_and_serialises_back_unchanged(kind: str, payload: dict[str, object]) -> None:
    event = parse_event(kind, payload)
    assert event.kind == kind
    assert event.payload() == payload
    assert list(event.payload()) == list(payload)  # the same key order as the API always showed


def test_a_payload_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValidationError):
        parse_event("user_message", {"text": "hi"})
    with pytest.raises(ValidationError):
        parse_event("tool_result", {"name": "x"})


def test_a_tool_call_event_records_the_result_the_agent_got_and_the_arguments() -> None:
    result = ToolCallResult(name="get_booking", call_id="c9", output={"n": 1})
    event = ToolCallEvent.of(result, {"booking_id": "BK-2"})
    assert event.payload() == result.model_dump(mode="json") | {"arguments": {"booking_id": "BK-2"}}
    assert event.result() == result


def _log() -> EpisodeLog:
    at = datetime(2026, 1, 1)
    return EpisodeLog(
        [LoggedEvent(seq=i, created_at=at, event=parse_event(k, p)) for i, (k, p) in enumerate(STORED, 1)]
    )


def test_the_transcript_holds_the_messages_in_order_and_no_tool_calls() -> None:
    assert [(m.role, m.content) for m in _log().transcript()] == [
        ("user", "Hi, I need to cancel booking BK-1."),
        ("assistant", "Could you confirm your name?"),
        ("user", "Thanks, bye."),
    ]
    assert _log().chat()[1] == {"role": "assistant", "content": "Could you confirm your name?"}


def test_a_restart_replays_only_the_calls_that_were_not_refused() -> None:
    assert [(seq, call.name) for seq, call in _log().replayable_calls()] == [(3, "get_booking")]
    assert [c.name for c in _log().tool_calls()] == ["get_booking", "cancel_booking"]


def test_wire_events_carry_the_stored_payload() -> None:
    logged = LoggedEvent(seq=4, created_at=datetime(2026, 1, 1), event=BackendErrorEvent(error="gone"))
    wire = logged.wire()
    assert (wire.seq, wire.kind, wire.payload) == (4, "backend_error", {"error": "gone"})
    assert AssistantMessageEvent(content="x").payload() == {"content": "x"}
    assert UserMessageEvent(content="x").payload() == {"content": "x", "done": False}
