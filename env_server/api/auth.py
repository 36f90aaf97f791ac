"""The bearer API key, checked before a request or WebSocket reaches any route (plain ASGI middleware).

Plain ASGI rather than `@app.middleware("http")`: Starlette's `BaseHTTPMiddleware` re-wraps every request and
response in streams and a task group, about a millisecond per request here — as much as a whole tool call.
"""

from __future__ import annotations

import secrets

from starlette.status import WS_1008_POLICY_VIOLATION
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from env_server.api.errors import render_error
from env_server.errors import UnauthorizedError

#: Paths served without the API key: liveness (ours and OpenEnv's) and the API's own documentation. The
#: viewer (`/ui`) checks the key itself, as a bearer header or its login cookie, and sends a browser without
#: either to its login form.
OPEN_PATHS = ("/healthz", "/docs", "/openapi.json", "/redoc", "/openenv/health")
VIEWER = "/ui"


class AuthMiddleware:
    """Refuses requests and WebSockets without the key, when one is set; the viewer checks it itself."""

    def __init__(
        self, app: ASGIApp, api_key: str | None = None, previous_api_keys: list[str] | None = None
    ) -> None:
        self.app = app
        self.api_key = api_key
        #: Every key accepted: the current one, then those being rotated out.
        self.keys = [k.encode() for k in [api_key or "", *(previous_api_keys or [])] if k]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the key, then pass the request on."""
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] == "http" and self._needs_key(scope["path"]) and not self._authorised(scope):
            err = UnauthorizedError("missing or wrong bearer API key (Authorization: Bearer <key>)")
            await render_error(err.status, err.code, err.message, "authorization")(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The key applies to WebSockets too (OpenEnv sessions): refused with a 401 before the handshake."""
        if not self.api_key or self._authorised(scope):
            await self.app(scope, receive, send)
            return
        err = UnauthorizedError("missing or wrong bearer API key (Authorization: Bearer <key>)")
        websocket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            await websocket.send_denial_response(
                render_error(err.status, err.code, err.message, "authorization")
            )
        else:  # a server without the denial-response extension answers the refused handshake with a 403
            await websocket.close(code=WS_1008_POLICY_VIOLATION, reason=err.message)

    def _needs_key(self, path: str) -> bool:
        """Whether `path` needs the key: a key is set and the path is neither open nor the viewer's."""
        viewer = path == VIEWER or path.startswith(VIEWER + "/")
        return bool(self.api_key) and not (viewer or path.startswith(OPEN_PATHS))

    def _authorised(self, scope: Scope) -> bool:
        supplied = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        token = supplied.removeprefix(b"Bearer ").strip()
        # every key is compared (no early exit), so the time taken does not tell which one nearly matched
        return sum(secrets.compare_digest(token, key) for key in self.keys) > 0
