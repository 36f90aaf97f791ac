"""Running one tool call inside a sandbox: validation, transaction, and the agent/backend error split.

Only infrastructure is a `BackendError`: the database unreachable, restarting or out of connections
(SQLAlchemy's `OperationalError`, `InterfaceError`, a pool timeout). Everything else a call raises comes
back as the call's `error`, and its writes are rolled back:

- a tool's `ToolError` (a business refusal) and a value the database refuses (`DataError`,
  `IntegrityError`): the agent's;
- any other exception (an `OverflowError` in date arithmetic, a `KeyError`, a read tool that wrote): a bug
  of the tool, logged with its traceback and counted in `groundstate_tool_bugs_total{domain,tool}` for the
  operator — and still charged to the call as an error, because the agent chose the arguments that reached
  it. Were it a backend error, a policy could turn any 0 into "not counted" by crashing a tool.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from prometheus_client import Counter
from sqlalchemy.exc import DataError, DisconnectionError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from env_server.domain import Tool, ToolContext, ToolError
from env_server.errors import BackendError
from env_server.execution.readonly import readonly_query
from env_server.execution.selection import find_tool
from env_server.sandbox import Sandbox
from env_server.sandbox.bookkeeping import next_id_number
from shared.models import ToolCallResult

log = logging.getLogger(__name__)
TOOL_BUGS = Counter(
    "groundstate_tool_bugs_total",
    "Tool calls that raised an unexpected exception (a server bug, charged to the call as an error)",
    ["domain", "tool"],
)
#: What the agent reads when a tool fails in a way its author did not foresee.
BUG_MESSAGE = "the tool could not handle these arguments ({kind}); nothing was changed"


def run_tool(
    sandbox: Sandbox, tools: dict[str, Tool], name: str, arguments: dict[str, Any], call_id: str | None = None
) -> ToolCallResult:
    """Validate and run one call in its own transaction.

    Returns the output, or as `error` a refusal or a tool's unexpected failure (the call's writes rolled
    back). Raises `UnknownToolError`/`InvalidArgumentsError` for calls that cannot run, and `BackendError`
    only when the database itself fails: that is never the agent's fault.
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
    except (OperationalError, InterfaceError, DisconnectionError, PoolTimeoutError) as exc:
        raise BackendError(f"sandbox database failed during tool '{name}': {exc}") from exc
    except Exception as exc:  # a bug of the tool, reached through the agent's arguments
        log.exception("server bug: tool %s.%s raised on arguments %r", domain.name, name, arguments)
        TOOL_BUGS.labels(domain.name, name).inc()
        return ToolCallResult(name=name, call_id=call_id, error=BUG_MESSAGE.format(kind=type(exc).__name__))
    return ToolCallResult(name=name, call_id=call_id, output=output)
