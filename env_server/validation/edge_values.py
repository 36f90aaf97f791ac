"""The `tool-edge-values` hack: arguments at the edge of every tool's schema, after the identity check.

A policy that cannot earn a 1 may look for an argument that crashes a tool, so the episode ends as a
`backend_error` and is not counted. This hack plays the task's gold calls up to and including its identity
check (so writes get past it), then calls every tool of the episode with deterministic profiles of edge
values read off its JSON schema: the low edge (0, the minimum integer, the earliest date, the first
enumerated value), the high edge (the maximum integer, the latest date, the last enumerated value), values
just outside the bounds, and edge text (long unicode, quotes, SQL) in every string. Except in the text
profile, an argument the gold also passes (a booking id, a customer id) keeps the gold's value, so the call
gets past the lookups to the arithmetic. It passes when no call is a backend error and the trajectory
scores 0 (or is an honest success, `adversary._judge`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from env_server.domain import Domain, GoldAction, Tool
from shared.tasks import Task

#: Text at the high edge: scripts, combining marks, right-to-left, quotes and SQL (200 characters).
LONG_TEXT = ("Zoë 😀 \u202eگ ' \" ; DROP TABLE x; -- \u0301" * 8)[:200]
PROFILES = ("low", "high", "outside", "text")


def identity_prefix(task: Task, domain: Domain) -> list[GoldAction]:
    """The gold's calls up to and including its last identity check (none: no call)."""
    ident = domain.conduct.identity_tool
    last = max((i for i, a in enumerate(task.gold_actions) if a.name == ident), default=-1)
    return list(task.gold_actions[: last + 1])


def edge_calls(tools: Mapping[str, Tool], known: Mapping[str, Any] | None = None) -> Iterator[GoldAction]:
    """For every tool, one call per profile (`PROFILES`); `known` holds real values of text arguments."""
    for tool in tools.values():
        schema = tool.openai_schema()["function"]["parameters"]
        for profile in PROFILES:
            yield GoldAction(name=tool.name, arguments=_object(schema, schema, profile, known or {}))


def known_values(task: Task) -> dict[str, Any]:
    """The text values the gold passes, by argument name (ids that exist, so lookups succeed)."""
    return {k: v for a in task.gold_actions for k, v in a.arguments.items() if isinstance(v, str)}


def _object(
    schema: Mapping[str, Any], root: Mapping[str, Any], profile: str, known: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        name: known[name]
        if name in known
        and profile != "text"
        and prop.get("type") == "string"
        and not {"format", "enum"} & set(prop)
        else _value(prop, root, profile, known)
        for name, prop in schema.get("properties", {}).items()
    }


def _value(prop: Mapping[str, Any], root: Mapping[str, Any], profile: str, known: Mapping[str, Any]) -> Any:
    """One edge value of a JSON schema property."""
    if "$ref" in prop:
        return _object(root["$defs"][prop["$ref"].rsplit("/", 1)[-1]], root, profile, known)
    if "anyOf" in prop:
        options = [p for p in prop["anyOf"] if p.get("type") != "null"] or prop["anyOf"]
        return _value(options[0 if profile == "low" else -1], root, profile, known)
    if "enum" in prop:
        return prop["enum"][0 if profile == "low" else -1]
    kind = prop.get("type")
    if kind == "integer":
        low, high = prop.get("minimum", -(2**63)), prop.get("maximum", 2**63)
        return {"low": low, "high": high, "outside": high + 1, "text": 0}[profile]
    if kind == "number":
        low, high = prop.get("minimum", -1e308), prop.get("maximum", 1e308)
        return {"low": low, "high": high, "outside": 1e308, "text": 0.0}[profile]
    if kind == "boolean":
        return profile != "low"
    if kind == "array":
        item = _value(prop.get("items", {}), root, profile, known)
        return [] if profile == "low" else [item, item]
    if kind == "object":
        return _object(prop, root, profile, known)
    if prop.get("format") == "date":
        return {
            "low": prop.get("formatMinimum", "0001-01-01"),
            "high": prop.get("formatMaximum", "9999-12-31"),
            "outside": "9999-12-31",
            "text": "2026-02-30",
        }[profile]
    return {
        "low": "0",
        "high": LONG_TEXT,
        "text": LONG_TEXT,
        "outside": "x" * (prop.get("maxLength", 10_000) + 1),
    }[profile]
