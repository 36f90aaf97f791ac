"""Read-only SQL for analytics tasks: parse the agent's statement and allow only what a question needs.

This is the first filter, never the boundary: the boundary is the database (an authorizer on SQLite, the
slot's read-only role on PostgreSQL: `env_server.sandbox`). The filter is an allow-list over the parsed tree,
so what it does not know it refuses, and its refusals name what went wrong where the database's would
only say "permission denied":

- the statement is one SELECT (or a set operation of SELECTs), with no write, lock or command inside;
- every function is on `ALLOWED_FUNCTIONS` (aggregates, arithmetic, text, dates, conditionals, windows):
  nothing that reads files, settings, other schemas or a query given as text;
- every table is a bare name: one of the domain's tables, or a CTE defined by a `WITH` that encloses the
  reference (a CTE named like a table does not make that name safe elsewhere in the statement); no table
  function in `FROM`.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from env_server.domain import ToolError

#: Every function (lower-case, as sqlglot names it) the agent's SQL may call, on either backend.
ALLOWED_FUNCTIONS = frozenset(
    {
        # operators sqlglot models as functions
        *("and", "or", "not", "xor", "exists", "in", "between", "like", "ilike", "is", "any", "all"),
        *("glob", "similar_to", "regexp_like", "tuple", "array", "distinct"),
        # aggregates
        *("count", "sum", "avg", "min", "max", "total", "group_concat", "string_agg", "array_agg"),
        *("stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "median", "bool_and"),
        *("bool_or", "every", "count_if", "countif", "logical_and", "logical_or", "group_concat"),
        # arithmetic
        *("abs", "round", "floor", "ceil", "ceiling", "power", "pow", "sqrt", "mod", "sign", "ln", "log"),
        *("exp", "trunc", "greatest", "least", "div", "safe_divide", "random"),
        # text
        *("lower", "upper", "length", "char_length", "character_length", "substr", "substring", "trim"),
        *("ltrim", "rtrim", "replace", "concat", "concat_ws", "instr", "strpos", "str_position", "left"),
        *("right", "lpad", "rpad", "initcap", "reverse", "split_part", "dpipe", "array_to_string"),
        # conditionals and types
        *("case", "if", "iif", "coalesce", "nullif", "ifnull", "nvl", "cast", "try_cast", "typeof"),
        # dates and times
        *("date", "time", "datetime", "strftime", "julianday", "date_trunc", "datetrunc", "timestamp_trunc"),
        *("extract", "date_part", "to_char", "age", "date_add", "date_sub", "date_diff", "datediff"),
        *("time_to_str", "str_to_time", "str_to_date", "ts_or_ds_to_date", "unix_to_time", "to_date"),
        *("timestamp", "current_date", "interval", "make_date", "time_str_to_time", "date_str_to_date"),
        *("dateadd", "datesub", "date_from_parts", "ts_or_ds_add", "epoch", "unixepoch"),
        *("ts_or_ds_to_timestamp", "ts_or_ds_to_time", "time_to_unix", "str_to_unix", "date_to_date_str"),
        # windows
        *("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead"),
        *("first_value", "last_value", "nth_value", "percentile_cont", "percentile_disc", "quantile"),
    }
)
_WRITES = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Command,
    exp.Into,
    exp.Merge,
    exp.Lock,
    exp.Set,
    exp.Copy,
)


def check_select(sql: str, tables: Collection[str], dialect: str) -> None:
    """Raise `ToolError` (an agent-visible refusal) unless `sql` is one read-only SELECT over `tables`."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except ParseError as exc:
        raise ToolError(f"the SQL does not parse: {exc.errors[0].get('description', exc)}") from None
    except (RecursionError, ValueError, TypeError) as exc:  # a parser limit, not a reason to fail the call
        raise ToolError(f"the SQL cannot be read ({type(exc).__name__}): simplify it") from None
    if len(statements) != 1:
        raise ToolError(f"send exactly one SELECT statement (got {len(statements)})")
    statement = statements[0]
    if not isinstance(statement, exp.Select | exp.SetOperation):
        raise ToolError(
            f"only SELECT statements are allowed; the database is read-only (got {statement.key.upper()})"
        )
    known = {t.lower() for t in tables}
    for node in statement.walk():
        if isinstance(node, _WRITES):
            raise ToolError(f"only SELECT statements are allowed; found {node.key.upper()}")
        if isinstance(node, exp.Func):
            _check_function(node)
        if isinstance(node, exp.Table):
            _check_table(node, known)


def _check_function(node: exp.Func) -> None:
    name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
    if name not in ALLOWED_FUNCTIONS:
        raise ToolError(
            f"the function {name} is not allowed in this sandbox (aggregates, arithmetic, text, date, "
            "conditional and window functions are)"
        )


def _check_table(table: exp.Table, known: set[str]) -> None:
    if not isinstance(table.this, exp.Identifier):
        raise ToolError(f"only tables may follow FROM or JOIN ({table.sql()[:80]} is not one)")
    if table.args.get("db") or table.args.get("catalog"):
        raise ToolError(f"schema-qualified table names are not allowed ({table.sql()}); use bare table names")
    name = table.name.lower()
    if name in known or name in _enclosing_ctes(table):
        return
    raise ToolError(f"unknown table '{name}' (tables: {', '.join(sorted(known))})")


def _enclosing_ctes(node: exp.Expression) -> set[str]:
    """The CTE names a reference may use: those of every `WITH` on the way up from it.

    Within a CTE's own definition, its name counts only under `WITH RECURSIVE` (or for the CTEs defined
    before it in the same `WITH`, which standard SQL scopes in order).
    """
    names: set[str] = set()
    cte: object = None  # the CTE definition the reference sits in, within this WITH
    child: object = node
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.With) and isinstance(child, exp.CTE):
            cte = child
        with_ = parent.args.get("with_") or parent.args.get("with")  # sqlglot 30 spells it `with_`
        if isinstance(with_, exp.With) and child is with_:
            ctes = list(with_.expressions)
            inside = next((i for i, c in enumerate(ctes) if c is cte), None)
            visible = ctes if inside is None or with_.args.get("recursive") else ctes[:inside]
            names |= {c.alias_or_name.lower() for c in visible}
            cte = None
        elif isinstance(with_, exp.With):  # the reference is in the body the WITH heads
            names |= {c.alias_or_name.lower() for c in with_.expressions}
        child, parent = parent, parent.parent
    return names
