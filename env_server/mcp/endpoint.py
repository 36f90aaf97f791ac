"""The MCP endpoint of every episode, `/v1/episodes/{episode_id}/mcp`: Streamable HTTP from the official SDK.

The transport runs **stateless** with JSON responses: every POST carries one JSON-RPC request and gets its
answer, and no MCP session lives in this process. The episode is the session (its URL names it, its state is
in the store), so any worker behind a load balancer can serve any request, as for REST; a stateful MCP
session would live in the memory of the one worker that opened it.

The SDK's session manager runs a task group for the requests it serves, so the host app's lifespan must
enter `McpEndpoint.lifespan()` (`create_app` does). Requests pass the app's middleware first: the bearer key
and the body limit apply to MCP as to REST. The SDK's DNS-rebinding protection checks `Host` and `Origin`
against `GROUNDSTATE_MCP_ALLOWED_HOSTS` (loopback by default; `["*"]` turns the check off).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import mcp_types as types
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from env_server.api.errors import render_error
from env_server.episodes.service import EpisodeService
from env_server.errors import BackendError, GroundstateError
from env_server.mcp.server import EPISODE_PARAM, build_server

__all__ = ["MCP_PATH", "McpEndpoint"]

MCP_PATH = f"/v1/episodes/{{{EPISODE_PARAM}}}/mcp"


class McpEndpoint:
    """The ASGI app mounted at `MCP_PATH`: a JSON-RPC error for an unknown episode, else the SDK."""

    #: The metrics middleware's route label (Starlette sets `scope["route"]` for API routes only).
    path = MCP_PATH

    def __init__(self, service: EpisodeService, allowed_hosts: Sequence[str], max_body: int) -> None:
        self.service = service
        self.server = build_server(service)
        self.security = transport_security(allowed_hosts)
        self.max_body = max_body
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the SDK's session manager for the app's lifetime (a manager runs once: a new one per start)."""
        manager = StreamableHTTPSessionManager(
            self.server,
            json_response=True,
            stateless=True,
            security_settings=self.security,
            max_request_body_size=self.max_body,
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a GET at once, refuse unknown episodes with the server's message, else run the SDK."""
        scope.setdefault("route", self)
        if scope["method"] == "GET":
            # Stateless and JSON-only, the endpoint has no event stream to GET; the SDK would hold the
            # request open until its timeout (about 30 s) before answering.
            message = (
                "the MCP endpoint takes JSON-RPC requests by POST (Streamable HTTP, stateless, JSON "
                "responses): there is no event stream to GET"
            )
            response = render_error(405, "method-not-allowed", message, None)
            response.headers["allow"] = "POST"
            await response(scope, receive, send)
            return
        manager = self._manager
        if manager is None:
            err: GroundstateError = BackendError(
                "the MCP endpoint is not running (the app's lifespan has not started)"
            )
            await _jsonrpc_error(err)(scope, receive, send)
            return
        try:
            await run_in_threadpool(self.service.tools, scope["path_params"][EPISODE_PARAM])
        except GroundstateError as err:
            await _jsonrpc_error(err)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


def _jsonrpc_error(err: GroundstateError) -> JSONResponse:
    """The error as MCP clients read it: a JSON-RPC error body carrying the server's message, at its status.

    The SDK's client surfaces a JSON-RPC error from a non-2xx body and replaces any other body by the
    status's name (an unknown episode would read "Not Found"). `data` holds the REST error's `code` and
    `field`, so a client can tell an unknown episode from a disposed or finished one.
    """
    rpc_code = types.INTERNAL_ERROR if isinstance(err, BackendError) else types.INVALID_REQUEST
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": rpc_code,
            "message": f"{err.code}: {err.message}",
            "data": {"code": err.code, "field": err.field},
        },
    }
    return JSONResponse(body, status_code=err.status)


def transport_security(allowed_hosts: Sequence[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection for these `Host` patterns (`name`, `name:*`); `*` alone turns it off.

    Origins are allowed for the same hosts over http and https (a browser page served by the host itself).
    """
    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [f"{scheme}://{host}" for host in allowed_hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=list(allowed_hosts), allowed_origins=origins
    )
