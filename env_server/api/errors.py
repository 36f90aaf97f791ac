"""Render every error as `{"error": {"code", "message", "field"}}`, including request validation."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from env_server.api.health import mark_store_unchecked
from env_server.errors import GroundstateError
from shared.models import ErrorBody, ErrorResponse


def render_error(status: int, code: str, message: str, field: str | None) -> JSONResponse:
    """The JSON response for an error, in the one shape every client parses."""
    body = ErrorResponse(error=ErrorBody(code=code, message=message, field=field))
    return JSONResponse(status_code=status, content=body.model_dump())


async def _groundstate_error(_: Request, exc: GroundstateError) -> JSONResponse:
    return render_error(exc.status, exc.code, exc.message, exc.field)


async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
    field = ".".join(loc) or None
    where = f"field '{field}': " if field else ""
    return render_error(422, "invalid-request", f"{where}{first.get('msg', 'invalid value')}", field)


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
