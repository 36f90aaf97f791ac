"""The two tools of analytics episodes: `sql_query` (read-only SELECT) and `submit_answer`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from env_server.domain import ToolContext, ToolError, tool

#: Rows returned per query; the agent should aggregate in SQL rather than page through raw rows.
MAX_ROWS = 200
#: A cell of a submitted answer: a sum of cents may pass 32 bits, so integers go to 2**53 (exact in JSON).
AnswerCell = (
    str
    | Annotated[int, Field(ge=-(2**53), le=2**53)]
    | Annotated[float, Field(allow_inf_nan=False)]
    | bool
    | None
)
#: The most rows an answer may hold (the gold SQL's result is read up to 10,000 rows too).
MAX_ANSWER_ROWS = 10_000


@tool(kind="read")
def sql_query(ctx: ToolContext, sql: Annotated[str, Field(max_length=20_000)]) -> dict[str, Any]:
    """Run one read-only SQL SELECT statement against the database and return its rows.

    Use it to answer analytical questions: aggregate in SQL (COUNT, SUM, GROUP BY) instead of fetching raw
    rows. Only SELECT (and WITH ... SELECT) over the domain's tables is allowed; at most 200 rows come back.

    Args:
        sql: a single SELECT statement, e.g. "SELECT tier, COUNT(*) FROM guests GROUP BY tier".
    """
    if ctx.query is None:
        raise ToolError("SQL queries are not available in this episode")
    columns, rows, truncated = ctx.query(sql, MAX_ROWS)
    return {"columns": columns, "rows": rows, "truncated": truncated}


@tool(kind="read")
def submit_answer(
    ctx: ToolContext,
    rows: Annotated[
        list[Annotated[list[AnswerCell], Field(max_length=100)]], Field(max_length=MAX_ANSWER_ROWS)
    ],
) -> str:
    """Submit the final answer to the analytical question, as a table of rows.

    Call it once, when you are sure. A single number is `[[42]]`; a list of names with counts is
    `[["gold", 12], ["platinum", 3]]`. Row order does not matter.

    Args:
        rows: the answer table, one inner list per row.
    """
    return f"answer recorded ({len(rows)} rows)"


ANALYTICS_TOOLS = (sql_query, submit_answer)
