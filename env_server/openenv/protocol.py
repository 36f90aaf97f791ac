"""OpenEnv's WebSocket frames: `{"type": "reset"|"step"|"state"|"close", "data": {...}}` in, one frame out.

Answers are `{"type": "observation", "data": {observation, reward, done}}`, `{"type": "state", "data": ...}`
or `{"type": "error", "data": {"message", "code", ...}}` with OpenEnv's error codes (`INVALID_JSON`,
`UNKNOWN_TYPE`, `VALIDATION_ERROR`, `SESSION_ERROR`, `EXECUTION_ERROR`); an error the episode service raised
also carries its groundstate `error` body, `retriable` for backend failures. OpenEnv's client raises on an
error frame, so a backend failure can never pass for a reward.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from env_server.errors import BackendError, GroundstateError
from env_server.openenv.session import EpisodeSession, SessionError
from shared.models import ErrorBody

__all__ = ["Reply", "answer"]

#: A frame to send back, or None when the client closed the session.
Reply = dict[str, Any] | None


def answer(session: EpisodeSession, raw: str, max_bytes: int) -> Reply:
    """The reply frame to one client frame (blocking: the session calls the episode service).

    A frame over `max_bytes` (`GROUNDSTATE_MAX_REQUEST_BYTES`, the REST body limit) is refused unread.
    """
    size = len(raw.encode())
    if size > max_bytes:
        too_large = ErrorBody(
            code="request-too-large",
            message=f"the frame has {size:,} bytes; this server accepts {max_bytes:,}",
        )
        return _error("VALIDATION_ERROR", too_large.message, error=too_large.model_dump(), retriable=False)
    try:
        frame = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _error("INVALID_JSON", f"invalid JSON: {exc}")
    if not isinstance(frame, dict):
        return _error("INVALID_JSON", "a frame is a JSON object with 'type' and 'data'")
    kind, data = frame.get("type"), frame.get("data") or {}
    if not isinstance(data, dict):
        return _error("VALIDATION_ERROR", "'data' must be a JSON object")
    try:
        return _dispatch(session, kind, data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        where = f"field '{field}': " if field else ""
        return _error("VALIDATION_ERROR", f"{where}{first['msg']}", field=field)
    except SessionError as exc:
        return _error("SESSION_ERROR", str(exc))
    except GroundstateError as exc:
        body = ErrorBody(code=exc.code, message=exc.message, field=exc.field).model_dump()
        return _error("EXECUTION_ERROR", exc.message, error=body, retriable=isinstance(exc, BackendError))


def _dispatch(session: EpisodeSession, kind: Any, data: dict[str, Any]) -> Reply:
    if kind == "reset":
        return {"type": "observation", "data": session.reset(data).model_dump(mode="json")}
    if kind == "step":
        return {"type": "observation", "data": session.step(data).model_dump(mode="json")}
    if kind == "state":
        return {"type": "state", "data": session.state().model_dump(mode="json")}
    if kind == "close":
        session.close()
        return None
    return _error("UNKNOWN_TYPE", f"unknown message type {kind!r} (reset, step, state, close)")


def _error(code: str, message: str, **extra: Any) -> Reply:
    return {"type": "error", "data": {"message": message, "code": code, **extra}}
