"""Running one tool inside a sandbox: validation, transaction, and the agent/backend error split."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import DataError, IntegrityError, OperationalError

from env_server.analytics import ANALYTICS_TOOLS
from env_server.domain import Domain, Tool, ToolContext, ToolError
from env_server.errors import BackendError, UnknownToolError
from env_server.sandbox.base import Sandbox
from shared.models import ToolCallResult
from shared.tasks import Task


def episode_tools(task: Task, domain: Domain) -> dict[str, Tool]:
    """The tools an agent gets for `task`: the domain's, plus SQL and an answer tool for analytics tasks."""
    tools = dict(domain.tools_by_name)
    if task.kind == "analytics":
        tools.update({t.name: t for t in ANALYTICS_TOOLS})
    return tools


def find_tool(tools: dict[str, Tool], name: str, domain: str) -> Tool:
    """The tool `name`, or `UnknownToolError` listing the valid names."""
    try:
        return tools[name]
    except KeyError:
        known = ", ".join(sorted(tools))
        raise UnknownToolError(
            f"domain '{domain}' has no tool '{name}' (tools: {known})", field="name"
        ) from None


def run_tool(
    sandbox: Sandbox, tools: dict[str, Tool], name: str, arguments: dict[str, Any], call_id: str | None = None
) -> ToolCallResult:
    """Validate and run one call in its own transaction.

    Returns the output, or the `ToolError` message as `error` (the call's writes rolled back). Raises
    `UnknownToolError`/`InvalidArgumentsError` for calls that cannot run, and `BackendError` when the tool
    or the database fails unexpectedly: that is never the agent's fault.
    """
    domain = sandbox.template.domain
    tool = find_tool(tools, name, domain.name)
    args = tool.validate(arguments)
    try:
        with sandbox.session(commit=tool.kind == "write") as session:  # reads take no writer lock
            ctx = ToolContext(session=session, now=domain.now, query=sandbox.readonly_query)
            output = tool.invoke(ctx, args)
    except ToolError as exc:
        return ToolCallResult(name=name, call_id=call_id, error=str(exc))
    except (DataError, IntegrityError) as exc:  # the database refused the agent's values: rolled back
        reason = str(exc.orig).strip().splitlines()[0]
        return ToolCallResult(name=name, call_id=call_id, error=f"the database refused this change: {reason}")
    except OperationalError as exc:
        raise BackendError(f"sandbox database failed during tool '{name}': {exc.orig}") from exc
    except Exception as exc:
        raise BackendError(f"tool '{name}' raised {type(exc).__name__}: {exc}") from exc
    return ToolCallResult(name=name, call_id=call_id, output=output)
