"""Render every error as `{"error": {"code", "message", "field"}}`, including request validation."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from env_server.api.health import mark_store_unchecked
from env_server.episodes.admission import retry_after_header
from env_server.errors import GroundstateError, OverCapacityError
from shared.models import ErrorBody, ErrorResponse


def render_error(status: int, code: str, message: str, field: str | None) -> JSONResponse:
    """The JSON response for an error, in the one shape every client parses.

    The message and field may quote what a request sent: anything Unicode cannot encode (a lone surrogate)
    is spelt as its escape, so an error is never itself a 500.
    """
    error = ErrorBody(code=code, message=_encodable(message) or "", field=_encodable(field))
    body = ErrorResponse(error=error)
    return JSONResponse(status_code=status, content=body.model_dump())


def _encodable(text: str | None) -> str | None:
    return None if text is None else text.encode("utf-8", "backslashreplace").decode("utf-8")


async def _groundstate_error(_: Request, exc: GroundstateError) -> JSONResponse:
    if isinstance(exc, OverCapacityError):
        return over_capacity_response(exc)
    return render_error(exc.status, exc.code, exc.message, exc.field)


def over_capacity_response(exc: OverCapacityError) -> JSONResponse:
    """503 `over-capacity` with the `Retry-After` the clients wait (at least) before trying again."""
    response = render_error(exc.status, exc.code, exc.message, exc.field)
    response.headers["Retry-After"] = retry_after_header(exc.retry_after_s)
    return response


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    first = exc.errors()[0]
    raw_loc = tuple(first.get("loc", ()))
    if first.get("type") == "json_invalid":  # FastAPI puts the position where a field would go
        position = raw_loc[1] if len(raw_loc) > 1 else "?"
        why = (first.get("ctx") or {}).get("error", "JSON decode error")
        message = f"the request body is not valid JSON: {why} at offset {position}"
        return render_error(422, "invalid-json", message, "body")
    content_type = request.headers.get("content-type")
    if raw_loc[:1] == ("body",) and len(raw_loc) == 1 and "json" not in (content_type or ""):
        message = (
            "the request body must be JSON sent with `content-type: application/json` "
            f"(this request's content-type: {content_type or 'none'})"
        )
        return render_error(415, "unsupported-media-type", message, "content-type")
    if raw_loc == ("body",) and first.get("type") == "missing":  # no body at all, JSON declared
        return render_error(422, "invalid-request", "the request body is empty: send a JSON object", "body")
    loc = [str(p) for p in raw_loc if p not in ("body", "query", "path")]
    field = ".".join(loc) or None
    where = f"field '{field}': " if field else ""
    message = f"{where}{first.get('msg', 'invalid value')}{_hint(first)}"
    return render_error(422, "invalid-request", message, field)


def _hint(error: Any) -> str:
    """A hint for a mistake with a known fix: a JSON object sent as a string holding JSON."""
    if error.get("type") == "dict_type" and isinstance(error.get("input"), str):
        return (
            " (this is a string; send the JSON object itself, e.g. \"arguments\": {\"id\": 1}, not a string "
            "holding JSON as OpenAI's `function.arguments` is)"
        )
    return ""


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own refusals (no such route, a method the route does not take) in the one error shape."""
    method, path = request.method, request.url.path
    if exc.status_code == 404:
        code, message = "not-found", f"no route {method} {path} (the API is listed at /docs)"
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("allow") or (exc.headers or {}).get("Allow") or "?"
        code, message = "method-not-allowed", f"{method} is not allowed on {path} (allowed: {allowed})"
    else:
        code, message = "http-error", str(exc.detail)
    response = render_error(exc.status_code, code, message, None)
    response.headers.update(exc.headers or {})
    return response


async def _database_unavailable(request: Request, exc: OperationalError | PoolTimeoutError) -> JSONResponse:
    """A database that refuses connections or a full pool: a backend failure, retriable (503), never a 500.

    PostgreSQL down or restarting, `too many clients already` under load: never the agent's fault. The
    next `/healthz` asks the store again rather than trusting its last check.
    """
    mark_store_unchecked(request)
    cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:300]
    return render_error(503, "backend-error", f"the database is unavailable: {cause}", None)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(OperationalError, _database_unavailable)  # type: ignore[arg-type]
    app.add_exception_handler(PoolTimeoutError, _database_unavailable)  # type: ignore[arg-type]
    app.add_exception_handler(GroundstateError, _groundstate_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
