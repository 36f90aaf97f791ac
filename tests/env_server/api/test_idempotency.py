"""Idempotent tool calls: a call resent with the same key returns the first result and runs once.

Two apps on one store act as two replicas (on PostgreSQL they share the sandboxes too, on SQLite each holds
its own copy and catches up from the store): a resend that reaches the other one still runs once.
"""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from env_server.domain.registry import DomainRegistry
from tests.factories import make_client, start_episode

TRANSFER = {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000}


def _transfer(client: TestClient, episode: str, key: str | None) -> dict[str, object]:
    body = {"name": "transfer", "arguments": TRANSFER, "call_id": "c1", "idempotency_key": key}
    r = client.post(f"/v1/episodes/{episode}/tool_calls", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_a_resent_write_runs_once_on_any_replica(
    tmp_path: Path, sandbox_url: str, toy_registry: DomainRegistry
) -> None:
    with (
        make_client(tmp_path, sandbox_url, toy_registry) as one,
        make_client(tmp_path, sandbox_url, toy_registry) as two,
    ):
        episode = start_episode(one)
        first = _transfer(one, episode, "k-1")
        assert _transfer(one, episode, "k-1") == first  # resent to the same replica
        assert _transfer(two, episode, "k-1") == first  # resent to another one
        kinds = [e["kind"] for e in one.get(f"/v1/episodes/{episode}").json()["events"]]
        assert kinds.count("tool_call") == 1
        again = _transfer(two, episode, "k-2")  # a new key is a new call
        assert again["output"] == "TR-90002"
        for _ in range(2):  # no key: every call runs (and is recorded)
            _transfer(one, episode, None)
        kinds = [e["kind"] for e in two.get(f"/v1/episodes/{episode}").json()["events"]]
        assert kinds.count("tool_call") == 4
        one.delete(f"/v1/episodes/{episode}")


def test_an_idempotency_key_is_checked_like_any_name(client: TestClient) -> None:
    episode = start_episode(client)
    r = client.post(
        f"/v1/episodes/{episode}/tool_calls",
        json={"name": "get_account", "arguments": {"account_id": "AC-0001"}, "idempotency_key": "x" * 300},
    )
    assert r.status_code == 422 and r.json()["error"]["field"] == "idempotency_key"
