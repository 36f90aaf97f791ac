"""The MCP server of an episode: `tools/list` and `tools/call` answered by the episode service.

One low-level `Server` serves every episode; each request names its episode in the URL it was posted to
(`/v1/episodes/{episode_id}/mcp`), which the SDK hands the handlers as `ctx.request`. The high-level
`MCPServer` (FastMCP before mcp 2.x) registers fixed Python functions as tools, but an episode's tools come
from its task's domain at run time, so the low-level handlers are the fitting layer.

Outcomes keep the service's split between the agent's mistakes and everything else:

- a business refusal (`ToolError`), an unknown tool and invalid arguments are the agent's to read and
  correct: a tool result with `is_error: true` (the MCP specification asks for exactly that, so the model
  can self-correct), as the REST rollout feeds 422s back to the model;
- a finished episode is a protocol error (the client should stop), and a backend failure is a protocol
  error too (`INTERNAL_ERROR`): never a tool result, so it cannot be charged to the agent.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from env_server.episodes.service import EpisodeService
from env_server.errors import BackendError, GroundstateError, InvalidRequestError
from shared.models import ToolCallRequest, ToolCallResult

__all__ = ["EPISODE_PARAM", "build_server", "mcp_tool", "tool_result"]

#: The path parameter the endpoint is mounted with.
EPISODE_PARAM = "episode_id"


def mcp_tool(schema: dict[str, Any], kind: str) -> types.Tool:
    """An episode tool's OpenAI `tools` entry as an MCP tool; read tools carry `readOnlyHint`."""
    function = schema["function"]
    read_only = kind == "read"
    return types.Tool(
        name=function["name"],
        description=function["description"],
        input_schema=function["parameters"],
        annotations=types.ToolAnnotations(read_only_hint=read_only, destructive_hint=not read_only),
    )


def tool_result(result: ToolCallResult) -> types.CallToolResult:
    """A tool's output as JSON text (and structured content), or its refusal as an `is_error` result."""
    if result.error is not None:
        return _error_result(result.error)
    text = json.dumps(result.output, ensure_ascii=False)
    structured = result.output if isinstance(result.output, dict) else None
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def build_server(service: EpisodeService) -> Server[Any]:
    """The MCP server whose handlers list and run the tools of the episode named in the request's URL."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schemas = await _service_call(service.tools, _episode_id(ctx))
        return types.ListToolsResult(tools=[mcp_tool(s, kind) for s, kind in schemas])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            request = ToolCallRequest(name=params.name, arguments=params.arguments or {})
        except ValidationError as exc:  # a name or argument no request may carry: the agent's mistake
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return _error_result(f"invalid tool call: {where}: {first['msg']}")
        try:
            result = await _service_call(service.call_tool, _episode_id(ctx), request)
        except _AgentMistake as mistake:
            return _error_result(mistake.message)
        return tool_result(result)

    return Server("groundstate", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


class _AgentMistake(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def _service_call(fn: Any, *args: Any) -> Any:
    """Run a blocking service call in the thread pool, translating its errors for MCP."""
    try:
        return await run_in_threadpool(fn, *args)
    except InvalidRequestError as exc:  # unknown tool, invalid arguments: the agent's to correct
        raise _AgentMistake(exc.message) from exc
    except BackendError as exc:
        raise MCPError(types.INTERNAL_ERROR, f"{exc.code}: {exc.message}") from exc
    except GroundstateError as exc:  # unknown or finished episode: the client's to handle
        raise MCPError(types.INVALID_REQUEST, f"{exc.code}: {exc.message}") from exc


def _episode_id(ctx: ServerRequestContext[Any]) -> str:
    request = ctx.request
    if not isinstance(request, Request) or EPISODE_PARAM not in request.path_params:
        raise MCPError(types.INVALID_REQUEST, "this MCP server is reached at /v1/episodes/{episode_id}/mcp")
    return str(request.path_params[EPISODE_PARAM])


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
