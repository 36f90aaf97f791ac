"""Analytics boundaries: does the question say which reading of each boundary its gold SQL takes?

The gold SQL is re-run with each boundary read the other way: `>` for `>=` (and back, likewise `<`),
BETWEEN with an open end, an inner join that keeps unmatched rows (a LEFT JOIN) or a LEFT JOIN that drops
them, and `ORDER BY ... LIMIT n` where row n ties with row n+1. A variant that changes the answer is a
reading a careful analyst could take; it is settled only when the question's text says which one is meant
(the phrases below), otherwise the check fails and names the variant.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from env_server.analytics import answer_matches
from env_server.analytics.answers import Rows
from env_server.domain import Domain, ToolError
from env_server.execution import readonly_query
from env_server.sandbox import template_of
from env_server.scoring.scorer import Scorer
from env_server.validation._report import CheckOutcome
from shared.tasks import Task

_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
#: Phrases that say which side of a boundary the question means, by the gold's comparison and operand.
_SETTLING = {
    (
        "number",
        "gt",
    ): r"more than|greater than|over|above|exceed\w*|higher than|larger than|bigger than|beyond",
    ("number", "gte"): r"at least|or more|or above|and above|and over|or higher|no less than|no fewer than|"
    r"minimum|or greater",
    ("number", "lt"): r"less than|fewer than|under|below|lower than|smaller than",
    ("number", "lte"): r"at most|or less|or fewer|or below|up to|no more than|not more than|maximum|"
    r"or lower",
    ("date", "gt"): r"after|later than",
    ("date", "gte"): r"on or after|since|from|starting|as of|onwards|or later",
    ("date", "lt"): r"before|earlier than|prior to",
    ("date", "lte"): r"on or before|until|through|up to and including|or earlier|by the end of|inclusive",
    ("join", "inner"): r"that have|which have|who have|that had|who had|has an?|have an?|with at least one|"
    r"only|for each|linked to",
    ("join", "left"): r"including|even|with no|without|zero|none|every|also those|all of",
    ("limit", "ties"): r"\bties?\b|tied|alphabetical|if several|break",
    ("between", "inclusive"): r"inclusive|between|through|from .+ to",
}
_OPERATORS: dict[type[exp.Expression], tuple[str, type[exp.Expression]]] = {
    exp.GT: ("gt", exp.GTE),
    exp.GTE: ("gte", exp.GT),
    exp.LT: ("lt", exp.LTE),
    exp.LTE: ("lte", exp.LT),
}
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_DATE_COLUMN = re.compile(r"(date|_on$|_at$|time|day)", re.IGNORECASE)


@dataclass(frozen=True)
class Variant:
    """One other reading of a boundary of the gold SQL."""

    label: str
    sql: str
    settling: tuple[str, str]  # key of _SETTLING for the gold's reading
    month_start: bool = False  # the boundary is the first of a month (a month named settles it)


def question_text(task: Task) -> str:
    """What the agent is asked: the script's lines, lower-cased (the description is for the catalogue)."""
    return " ".join(task.user.lines).lower()


def settled(variant: Variant, question: str) -> bool:
    """Whether the question's wording picks the gold's reading of this boundary."""
    if variant.month_start and re.search(rf"\b(?:{_MONTH_NAMES})\b", question):
        return True
    return re.search(rf"\b(?:{_SETTLING[variant.settling]})", question) is not None


def variants(sql: str, dialect: str) -> Iterator[Variant]:
    """Every boundary variant of `sql`: comparisons, BETWEEN ends, join kinds."""
    tree = sqlglot.parse_one(sql, read=dialect)
    kinds = tuple(_OPERATORS)
    for i, node in enumerate(tree.find_all(*kinds)):
        if any(
            isinstance(s, exp.Literal) and not s.is_string and s.name == "0"
            for s in (node.this, node.expression)
        ):
            continue  # `> 0` is "has any": `>= 0` is no reading an analyst would take
        copy = tree.copy()
        target = list(copy.find_all(*kinds))[i]
        name, other = _OPERATORS[type(target)]
        literal = next(
            (s.name for s in (target.this, target.expression) if isinstance(s, exp.Literal) and s.is_string),
            "",
        )
        is_date = bool(_ISO_DATE.match(literal)) or any(
            isinstance(s, exp.Column) and _DATE_COLUMN.search(s.name)
            for s in (target.this, target.expression)
        )
        swapped = other(this=target.this.copy(), expression=target.expression.copy())
        label = f"{node.sql(dialect=dialect)}  ->  {swapped.sql(dialect=dialect)}"
        target.replace(swapped)
        yield Variant(
            label,
            copy.sql(dialect=dialect),
            ("date" if is_date else "number", name),
            month_start=is_date and literal[8:10] == "01",
        )
    for i, node in enumerate(tree.find_all(exp.Between)):
        for end in ("low", "high"):
            copy = tree.copy()
            target = list(copy.find_all(exp.Between))[i]
            lo, hi = target.args["low"].copy(), target.args["high"].copy()
            col = target.this.copy()
            low_op, high_op = (exp.GT, exp.LTE) if end == "low" else (exp.GTE, exp.LT)
            opened = exp.and_(low_op(this=col, expression=lo), high_op(this=col.copy(), expression=hi))
            target.replace(exp.Paren(this=opened))
            yield Variant(
                f"{node.sql(dialect=dialect)}  ->  open {end} end",
                copy.sql(dialect=dialect),
                ("between", "inclusive"),
            )
    for i, node in enumerate(tree.find_all(exp.Join)):
        side, kind = (node.args.get("side") or "").upper(), (node.args.get("kind") or "").upper()
        if kind in ("CROSS", "OUTER") or side in ("RIGHT", "FULL") or node.args.get("on") is None:
            continue
        copy = tree.copy()
        target = list(copy.find_all(exp.Join))[i]
        if side == "LEFT":
            target.set("side", None)
            yield Variant(
                f"LEFT JOIN {node.this.sql()}  ->  JOIN", copy.sql(dialect=dialect), ("join", "left")
            )
        else:
            target.set("kind", None)
            target.set("side", "LEFT")
            yield Variant(
                f"JOIN {node.this.sql()}  ->  LEFT JOIN", copy.sql(dialect=dialect), ("join", "inner")
            )


def tie_query(sql: str, dialect: str) -> tuple[str, int] | None:
    """For `... ORDER BY k LIMIT n`: a query of the ordering keys of the first n+1 rows, and n."""
    tree = sqlglot.parse_one(sql, read=dialect)
    if not isinstance(tree, exp.Select):
        return None
    limit, order = tree.args.get("limit"), tree.args.get("order")
    if limit is None or order is None or not isinstance(limit.expression, exp.Literal):
        return None
    n = int(limit.expression.name)
    projections = tree.expressions
    aliases = {p.alias: p.this for p in projections if isinstance(p, exp.Alias)}
    keys = []
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name in aliases:
            key = aliases[key.name]
        elif isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(projections):
            key = projections[int(key.name) - 1]
            key = key.this if isinstance(key, exp.Alias) else key
        keys.append(key.copy())
    copy = tree.copy()
    copy.set("expressions", keys)
    for ordered, key in zip(copy.args["order"].expressions, keys, strict=True):
        ordered.set("this", key.copy())
    copy.set("distinct", tree.args.get("distinct"))
    copy.set("limit", exp.Limit(expression=exp.Literal.number(n + 1)))
    return copy.sql(dialect=dialect), n


def boundary_check(task: Task, domain: Domain, scorer: Scorer, gold: Rows) -> tuple[CheckOutcome, list[str]]:
    """The `boundaries` check, and a note for each answer-changing variant the question settles."""
    assert task.analytics is not None
    question = question_text(task)
    sandbox = scorer.sandboxes.create(uuid.uuid4().hex, template_of(task, domain))
    unsettled: list[str] = []
    notes: list[str] = []
    try:
        try:
            found = list(variants(task.analytics.gold_sql, sandbox.dialect))
        except sqlglot.errors.SqlglotError as exc:
            return CheckOutcome("boundaries", False, f"the gold SQL does not parse: {exc}"), []
        for variant in found:
            try:
                _, rows, _ = readonly_query(sandbox, variant.sql, limit=10_000, timeout_ms=30_000)
            except ToolError:
                continue
            if answer_matches(rows, gold, task.analytics.tolerance)[0]:
                continue
            (notes if settled(variant, question) else unsettled).append(variant.label)
        ties = tie_query(task.analytics.gold_sql, sandbox.dialect)
        if ties is not None:
            try:
                _, keys, _ = readonly_query(sandbox, ties[0], limit=10_000, timeout_ms=30_000)
            except ToolError:
                keys = []
            n = ties[1]
            if len(keys) > n and keys[n] == keys[n - 1]:
                label = f"LIMIT {n} cuts a tie (rows {n} and {n + 1} share the ordering value {keys[n]})"
                if settled(Variant(label, "", ("limit", "ties")), question):
                    notes.append(label)
                else:
                    unsettled.append(label)
    finally:
        sandbox.dispose()
    if unsettled:
        detail = (
            "the answer changes with " + "; ".join(unsettled) + ": say in the question which reading is meant"
        )
        return CheckOutcome("boundaries", False, detail), notes
    detail = (
        f"{len(notes)} answer-changing readings, all settled by the question"
        if notes
        else "no boundary moves the answer"
    )
    return CheckOutcome("boundaries", True, detail), notes
