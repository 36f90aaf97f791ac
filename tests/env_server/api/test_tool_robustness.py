"""Hostile argument values for every tool of every domain: never a server error, and both backends agree.

Each tool is called with arguments from a task's gold action (or minimal ones), with one argument at a time
replaced by a value an agent might send by mistake: negative, zero and overflowing numbers, empty, huge,
SQL-looking, NUL-bearing and non-ASCII text, impossible dates. Every call must be answered as the agent's
mistake (HTTP 422, or a tool error with HTTP 200) or succeed — never a 5xx — and the two sandbox backends
must accept and refuse the same calls with the same outputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain import Domain, Tool
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings

HOSTILE: dict[str, list[Any]] = {
    "integer": [-1, 0, 2**31, 2**63, -(2**63) - 1, 10**30],
    "number": [-1.5, 0.1, 1e308],
    "string": ["", "x" * 5000, "'; DROP TABLE x; --", "nul\u0000byte", "2026-13-45", "ÄÖ-ünï-🙂", "ZZ-00000"],
    "boolean": [True, False],
    "array": [[], ["x"] * 200],
}
FILLER: dict[str, Any] = {"integer": 1, "number": 1.0, "string": "X-1", "boolean": True, "array": []}

Outcome = tuple[int, bool, Any]


def _types(spec: dict[str, Any]) -> set[str]:
    return ({spec.get("type")} | {s.get("type") for s in spec.get("anyOf", [])}) - {None, "null"}


def _base_args(tool: Tool, example: dict[str, Any] | None) -> dict[str, Any]:
    if example is not None:
        return dict(example)
    params = tool.openai_schema()["function"]["parameters"]
    props = params.get("properties", {})
    return {name: FILLER[min(_types(props[name]))] for name in params.get("required", [])}


def _calls(domain: Domain, registry: DomainRegistry) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(task to run in, tool, arguments) for every hostile value of every argument of every tool."""
    tasks = [t for t in registry.tasks(domain=domain.name) if t.kind == "action"]
    examples = {a.name: (t.id, a.arguments) for t in reversed(tasks) for a in t.gold_actions}
    for tool in domain.tools:
        task_id, example = examples.get(tool.name, (tasks[0].id, None))
        args = _base_args(tool, example)
        for name, spec in tool.openai_schema()["function"]["parameters"].get("properties", {}).items():
            for kind in sorted(_types(spec)):
                for value in HOSTILE.get(kind, []):
                    yield task_id, tool.name, {**args, name: value}


def _run_all(tmp_path: Path, sandbox_url: str, registry: DomainRegistry) -> dict[str, Outcome]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/{sandbox_url[:5]}.db", sandbox_url=sandbox_url)
    outcomes: dict[str, Outcome] = {}
    with TestClient(create_app(settings, registry=registry)) as client:
        episodes: dict[str, str] = {}
        for domain in registry.domains:
            for task_id, tool, args in _calls(domain, registry):
                if task_id not in episodes:
                    started = client.post("/v1/episodes", json={"task_id": task_id})
                    episodes[task_id] = started.json()["episode_id"]
                body = {"name": tool, "arguments": args}
                r = client.post(f"/v1/episodes/{episodes[task_id]}/tool_calls", json=body)
                assert r.status_code < 500, f"{domain.name}.{tool}({args}) -> {r.status_code} {r.text[:300]}"
                result = r.json()
                accepted = r.status_code == 200 and result["error"] is None
                outcomes[f"{domain.name}.{tool}({args})"[:400]] = (
                    r.status_code,
                    accepted,
                    result["output"] if accepted else None,
                )
    return outcomes


@pytest.mark.slow
@pytest.mark.postgres
def test_hostile_arguments_are_agent_mistakes_alike_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    registry = DomainRegistry.discover()
    on_sqlite = _run_all(tmp_path, "sqlite://", registry)
    on_postgres = _run_all(tmp_path, pg_url, registry)
    assert len(on_sqlite) > 1000
    differ = [k for k in on_sqlite if on_sqlite[k] != on_postgres.get(k)]
    assert not differ, "\n".join(f"{k}: {on_sqlite[k]} vs {on_postgres.get(k)}"[:500] for k in differ[:5])
    assert {status for status, _, _ in on_sqlite.values()} == {200, 422}
