"""Bearer-key and body-size checks and Prometheus metrics for every request, as plain ASGI middleware.

Plain ASGI rather than `@app.middleware("http")`: Starlette's `BaseHTTPMiddleware` re-wraps every request and
response in streams and a task group, about a millisecond per request here — as much as a whole tool call.
"""

from __future__ import annotations

import secrets
import time

from prometheus_client import Counter, Histogram
from starlette.status import WS_1008_POLICY_VIOLATION
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from env_server.api.errors import render_error
from env_server.errors import GroundstateError, RequestTooLargeError, UnauthorizedError

REQUESTS = Counter("groundstate_requests_total", "HTTP requests", ["route", "status"])
LATENCY = Histogram(
    "groundstate_request_seconds",
    "HTTP request latency",
    ["route"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5),
)
#: Paths served without the API key: liveness (ours and OpenEnv's) and the API's own documentation. The
#: viewer (`/ui`) checks the key itself, as a bearer header or its login cookie, and sends a browser without
#: either to its login form.
OPEN_PATHS = ("/healthz", "/docs", "/openapi.json", "/redoc", "/openenv/health")
VIEWER = "/ui"
#: The response header naming the replica (`GROUNDSTATE_REPLICA_ID`) that served the request.
REPLICA_HEADER = b"x-groundstate-replica"


class ObserveMiddleware:
    """Refuses requests without the key (when one is set) or over the size limit; times every request."""

    def __init__(
        self,
        app: ASGIApp,
        api_key: str | None = None,
        max_body: int | None = None,
        replica_id: str | None = None,
        previous_api_keys: list[str] | None = None,
    ) -> None:
        self.app = app
        self.api_key = api_key
        #: Every key accepted: the current one, then those being rotated out.
        self.keys = [k.encode() for k in [api_key or "", *(previous_api_keys or [])] if k]
        self.max_body = max_body
        #: Names the server in every response, so a client behind a load balancer can tell replicas apart.
        self.replica_header = (REPLICA_HEADER, replica_id.encode("latin-1")) if replica_id else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the key, then pass the request on and time it."""
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if self.replica_header is not None:
                    message["headers"] = [*message.get("headers", ()), self.replica_header]
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            err, field = refusal
            await render_error(err.status, err.code, err.message, field)(scope, receive, send_observed)
            return

        try:
            await self.app(scope, receive, send_observed)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")  # set by the router on this scope
            LATENCY.labels(route).observe(time.perf_counter() - start)
            REQUESTS.labels(route, str(status)).inc()

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

    def _refusal(self, scope: Scope) -> tuple[GroundstateError, str | None] | None:
        path = scope["path"]
        viewer = path == VIEWER or path.startswith(VIEWER + "/")
        if self.api_key and not (viewer or path.startswith(OPEN_PATHS)) and not self._authorised(scope):
            unauthorised = UnauthorizedError("missing or wrong bearer API key (Authorization: Bearer <key>)")
            return unauthorised, "authorization"
        length = next((v for k, v in scope["headers"] if k == b"content-length"), b"0")
        if self.max_body is not None and length.isdigit() and int(length) > self.max_body:
            too_large = RequestTooLargeError(
                f"the request body has {int(length):,} bytes; this server accepts at most {self.max_body:,} "
                "(GROUNDSTATE_MAX_REQUEST_BYTES)"
            )
            return too_large, None
        return None

    def _authorised(self, scope: Scope) -> bool:
        supplied = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        token = supplied.removeprefix(b"Bearer ").strip()
        # every key is compared (no early exit), so the time taken does not tell which one nearly matched
        return sum(secrets.compare_digest(token, key) for key in self.keys) > 0
