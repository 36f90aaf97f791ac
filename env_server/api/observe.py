"""Prometheus metrics and the replica header for every HTTP request, as plain ASGI middleware.

It wraps everything else, the refusals of `AuthMiddleware` included, so a refused request is counted too.
Plain ASGI rather than `@app.middleware("http")`: Starlette's `BaseHTTPMiddleware` re-wraps every request and
response in streams and a task group, about a millisecond per request here — as much as a whole tool call.
"""

from __future__ import annotations

import time

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUESTS = Counter("groundstate_requests_total", "HTTP requests", ["route", "status"])
LATENCY = Histogram(
    "groundstate_request_seconds",
    "HTTP request latency",
    ["route"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5),
)
#: The response header naming the replica (`GROUNDSTATE_REPLICA_ID`) that served the request.
REPLICA_HEADER = b"x-groundstate-replica"


class ObserveMiddleware:
    """Times and counts every HTTP request by route and status, and names the replica in its response."""

    def __init__(self, app: ASGIApp, replica_id: str | None = None) -> None:
        self.app = app
        #: Names the server in every response, so a client behind a load balancer can tell replicas apart.
        self.replica_header = (REPLICA_HEADER, replica_id.encode("latin-1")) if replica_id else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, timing it and recording its status."""
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

        try:
            await self.app(scope, receive, send_observed)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")  # set by the router on this scope
            LATENCY.labels(route).observe(time.perf_counter() - start)
            REQUESTS.labels(route, str(status)).inc()
