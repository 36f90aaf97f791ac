"""The request-size limit (`GROUNDSTATE_MAX_REQUEST_BYTES`), checked on the declared length (plain ASGI)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from env_server.api.errors import render_error
from env_server.errors import RequestTooLargeError


class BodyLimitMiddleware:
    """Refuses an HTTP request whose `Content-Length` exceeds `max_body` before any route reads it."""

    def __init__(self, app: ASGIApp, max_body: int | None = None) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an oversized request with a 413; pass everything else on."""
        if scope["type"] == "http" and self.max_body is not None:
            length = next((v for k, v in scope["headers"] if k == b"content-length"), b"0")
            if length.isdigit() and int(length) > self.max_body:
                err = RequestTooLargeError(
                    f"the request body has {int(length):,} bytes; this server accepts at most "
                    f"{self.max_body:,} (GROUNDSTATE_MAX_REQUEST_BYTES)"
                )
                await render_error(err.status, err.code, err.message, None)(scope, receive, send)
                return
        await self.app(scope, receive, send)
