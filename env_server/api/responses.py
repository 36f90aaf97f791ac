"""The error responses each route declares in the OpenAPI schema: the envelope the server really sends.

Every error leaves the server as `{"error": {"code", "message", "field"}}` (`env_server.api.errors`), so
every route declares that shape for each status it can return; a generated client then parses errors as the
wire carries them. Declaring 422 here also replaces FastAPI's default `{"detail": [...]}` 422, which this
server never sends. `tests/env_server/api/test_openapi_errors.py` checks the declarations against real
responses.
"""

from __future__ import annotations

from typing import Any

from shared.models import ErrorResponse

__all__ = ["BODY", "COMMON", "DESCRIPTIONS", "error_responses"]

DESCRIPTIONS: dict[int, str] = {
    401: "`unauthorized`: the server requires an API key (`Authorization: Bearer ...`) and got none or "
    "a wrong one.",
    404: "`unknown-task`, `unknown-domain`, `unknown-episode`: no such resource (the message names it).",
    409: "`episode-finished`, `conversation-over`: the episode no longer takes this call.",
    410: "`episode-disposed`: the episode's sandbox was disposed of.",
    413: "`request-too-large`: the body exceeds `GROUNDSTATE_MAX_REQUEST_BYTES`.",
    415: "`unsupported-media-type`: the body must be JSON sent as `content-type: application/json`.",
    422: "`invalid-request`, `invalid-json`, `unknown-tool`, `invalid-arguments`: the request is invalid; "
    "`field` names the part at fault.",
    503: "`backend-error`, `judge-not-configured`, `domain-version-changed`: an infrastructure failure "
    "(the database, a model endpoint), never the caller's fault; retriable.",
}
"""What each status means on this server, with the error codes it carries."""

COMMON = (401, 503)
"""Statuses every `/v1` route can return: authentication and the database."""
BODY = (413, 415, 422)
"""Statuses every route with a JSON body can return."""


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: the error envelope for each status it can return.

    Args:
        *statuses: HTTP statuses, each one of `DESCRIPTIONS`.

    Raises:
        KeyError: A status this module does not describe.
    """
    return {
        status: {"model": ErrorResponse, "description": DESCRIPTIONS[status]}
        for status in sorted(set(statuses))
    }
