"""Issue #20: no argument an agent sends becomes a backend error, a 5xx or a partial write.

Property-based (hypothesis), through the HTTP API, on both backends: for every tool of every domain, in an
episode whose caller the gold has already verified (so writes get past the identity check), arguments
drawn from the tool's own JSON schema with a bias for its edges — 0, negative, the bounds and one past
them, 2**31, 2**63, huge and unicode text, 0001-01-01, 9999-12-31, impossible dates — and the gold's own ids
so lookups succeed. Every call is answered 200 (a result or a tool error: then the state is unchanged) or
422 naming the argument (the schema refused it); the episode never becomes a backend error.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.execution import episode_tools
from env_server.settings import Settings
from env_server.validation.edge_values import LONG_TEXT, identity_prefix, known_values
from shared.tasks import Task

REGISTRY = DomainRegistry.discover(only=["hotel", "retail", "insurance", "travel", "telecom"])
EDGE_INTS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31), 2**63, -(2**63) - 1]
EDGE_TEXT = ["", "0", LONG_TEXT, "x" * 4001, "'; DROP TABLE x; --", "ÄÖ-ünï-🙂\u202e", "ZZ-00000"]
EDGE_DATES = ["0001-01-01", "9999-12-31", "1900-01-01", "2100-12-31", "2026-02-30", "2026-13-01"]


def _task(domain: str) -> Task:
    """A task of the domain whose gold verifies the caller and then writes."""
    dom = REGISTRY.domain(domain)
    return next(
        t
        for t in REGISTRY.tasks(domain=domain)
        if identity_prefix(t, dom) and len(identity_prefix(t, dom)) < len(t.gold_actions)
    )


CASES = [
    (d, tool)
    for d in ("hotel", "retail", "insurance", "travel", "telecom")
    for tool in episode_tools(_task(d), REGISTRY.domain(d))
]


def _strategy(prop: dict[str, Any], root: dict[str, Any], known: dict[str, Any], name: str) -> Any:
    """Values for one JSON schema property, leaning on its edges."""
    if "$ref" in prop:
        return _object(root["$defs"][prop["$ref"].rsplit("/", 1)[-1]], root, known)
    if "anyOf" in prop:
        return st.one_of([_strategy(p, root, known, name) for p in prop["anyOf"]])
    if "enum" in prop:
        return st.sampled_from([*prop["enum"], "not-a-choice"])
    kind = prop.get("type")
    if kind == "null":
        return st.none()
    if kind == "integer":
        low, high = prop.get("minimum", -(2**63)), prop.get("maximum", 2**63)
        return st.one_of(st.sampled_from([*EDGE_INTS, low, high, high + 1]), st.integers(low, high))
    if kind == "number":
        return st.one_of(
            st.sampled_from([0.0, -1.5, 1e308]), st.floats(allow_nan=False, allow_infinity=False)
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_strategy(prop.get("items", {}), root, known, name), max_size=3)
    if kind == "object":
        return _object(prop, root, known)
    if prop.get("format") == "date":
        iso = st.dates(date(1900, 1, 1), date(2100, 12, 31)).map(date.isoformat)
        return st.one_of(st.sampled_from(EDGE_DATES), iso)
    text = st.one_of(st.sampled_from(EDGE_TEXT), st.text(max_size=30))
    return st.one_of(st.just(known[name]), text) if name in known else text


def _object(schema: dict[str, Any], root: dict[str, Any], known: dict[str, Any]) -> Any:
    props = schema.get("properties", {})
    return st.fixed_dictionaries({n: _strategy(p, root, known, n) for n, p in props.items()})


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, registry=REGISTRY)) as c:
        yield c


def _diff(client: TestClient, episode: str) -> list[Any]:
    body = client.get(f"/v1/episodes/{episode}").json()
    assert body["status"] == "active", body
    return list(body["diff"])


@pytest.mark.parametrize(("domain", "tool"), CASES, ids=[f"{d}.{t}" for d, t in CASES])
def test_no_argument_escapes_into_a_backend_error_or_a_partial_write(
    client: TestClient, domain: str, tool: str
) -> None:
    task = _task(domain)
    schema = (
        REGISTRY.domain(domain).tools_by_name.get(tool) or episode_tools(task, REGISTRY.domain(domain))[tool]
    )
    params = schema.openai_schema()["function"]["parameters"]

    @settings(
        max_examples=8,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(args=_object(params, params, known_values(task)))
    def call(args: dict[str, Any]) -> None:
        episode = client.post("/v1/episodes", json={"task_id": task.id}).json()["episode_id"]
        try:
            for action in identity_prefix(task, REGISTRY.domain(domain)):
                r = client.post(
                    f"/v1/episodes/{episode}/tool_calls",
                    json={"name": action.name, "arguments": action.arguments},
                )
                assert r.status_code == 200 and r.json()["error"] is None, r.text
            before = _diff(client, episode)
            r = client.post(f"/v1/episodes/{episode}/tool_calls", json={"name": tool, "arguments": args})
            assert r.status_code in (200, 422), (r.status_code, r.text)
            if r.status_code == 422:
                assert r.json()["error"]["field"].startswith("arguments"), r.text
            elif r.json()["error"] is not None:
                assert _diff(client, episode) == before, "a refused call left a write behind"
            _diff(client, episode)  # still active: no backend error
        finally:
            client.delete(f"/v1/episodes/{episode}")

    call()
