"""Running one domain tool inside a sandbox: validation, transaction, and the agent/backend error split."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import OperationalError

from env_server.domain import Domain, Tool, ToolContext, ToolError
from env_server.errors import BackendError, UnknownToolError
from env_server.sandbox.base import Sandbox
from shared.models import ToolCallResult


def find_tool(domain: Domain, name: str) -> Tool:
    """The domain's tool `name`, or `UnknownToolError` listing the valid names."""
    try:
        return domain.tools_by_name[name]
    except KeyError:
        known = ", ".join(sorted(domain.tools_by_name))
        raise UnknownToolError(
            f"domain '{domain.name}' has no tool '{name}' (tools: {known})", field="name"
        ) from None


def run_tool(
    sandbox: Sandbox, domain: Domain, name: str, arguments: dict[str, Any], call_id: str | None = None
) -> ToolCallResult:
    """Validate and run one call in its own transaction.

    Returns the output, or the `ToolError` message as `error` (the call's writes rolled back). Raises
    `UnknownToolError`/`InvalidArgumentsError` for calls that cannot run, and `BackendError` when the tool
    or the database fails unexpectedly: that is never the agent's fault.
    """
    tool = find_tool(domain, name)
    args = tool.validate(arguments)
    try:
        with sandbox.session() as session:
            output = tool.invoke(ToolContext(session=session, now=domain.now), args)
    except ToolError as exc:
        return ToolCallResult(name=name, call_id=call_id, error=str(exc))
    except OperationalError as exc:
        raise BackendError(f"sandbox database failed during tool '{name}': {exc.orig}") from exc
    except Exception as exc:
        raise BackendError(f"tool '{name}' raised {type(exc).__name__}: {exc}") from exc
    return ToolCallResult(name=name, call_id=call_id, output=output)
