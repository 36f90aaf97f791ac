"""Running one tool call inside a sandbox: validation, transaction, and the agent/backend error split.

Refusals are the agent's and come back as the call's `error`: a tool's `ToolError`, a value longer than its
column (checked before the flush, see `env_server.sandbox.limits`), or a value the database refuses. A read
tool runs in a transaction that is always rolled back. Anything else is the server's fault: `BackendError`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy.exc import DataError, IntegrityError, OperationalError

from env_server.domain import Tool, ToolContext, ToolError
from env_server.errors import BackendError
from env_server.execution.readonly import readonly_query
from env_server.execution.selection import find_tool
from env_server.sandbox import Sandbox
from env_server.sandbox.bookkeeping import next_id_number
from shared.models import ToolCallResult


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
            ctx = ToolContext(
                session=session,
                now=domain.now,
                query=partial(readonly_query, sandbox),
                next_id_number=partial(next_id_number, session),
            )
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
