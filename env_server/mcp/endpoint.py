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

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from env_server.api.errors import render_error
from env_server.episodes.service import EpisodeService
from env_server.errors import BackendError, GroundstateError
from env_server.mcp.server import EPISODE_PARAM, build_server

__all__ = ["MCP_PATH", "McpEndpoint"]

MCP_PATH = f"/v1/episodes/{{{EPISODE_PARAM}}}/mcp"


class McpEndpoint:
    """The ASGI app mounted at `MCP_PATH`: 404 for an unknown episode, else the SDK's transport."""

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
        """Refuse unknown episodes with the REST error shape, then hand the request to the SDK."""
        scope.setdefault("route", self)
        manager = self._manager
        if manager is None:
            err: GroundstateError = BackendError(
                "the MCP endpoint is not running (the app's lifespan has not started)"
            )
            await render_error(err.status, err.code, err.message, None)(scope, receive, send)
            return
        try:
            await run_in_threadpool(self.service.tools, scope["path_params"][EPISODE_PARAM])
        except GroundstateError as err:
            await render_error(err.status, err.code, err.message, err.field)(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


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
