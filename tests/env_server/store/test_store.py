"""The control-plane store: migrations, persistence before response, and surviving a restart."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.store import EpisodeRecord, Store, make_store_engine
from env_server.store.events import ToolCallEvent, UserMessageEvent
from env_server.store.migrate import current, upgrade
from tests.factories import call, start_episode


def test_upgrade_creates_the_tables_at_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    upgrade(url)
    assert current(url) == "0003"
    names = set(inspect(make_store_engine(url)).get_table_names())
    assert {"episodes", "events", "scores", "minted_tasks", "alembic_version"} <= names


@pytest.fixture
def pg_store_url(fresh_pg_url: str) -> str:
    """A fresh, empty PostgreSQL database for the store."""
    return fresh_pg_url


@pytest.mark.postgres
def test_upgrade_on_postgresql(pg_store_url: str) -> None:
    upgrade(pg_store_url)
    assert current(pg_store_url) == "0003"


@pytest.mark.postgres
def test_postgresql_store_serves_whole_episodes_across_app_instances(
    pg_store_url: str, pg_url: str, toy_registry: DomainRegistry
) -> None:
    """The production layout: store and sandboxes on PostgreSQL, any instance serving any episode."""
    settings = Settings(store_url=pg_store_url, sandbox_url=pg_url)
    with TestClient(create_app(settings, registry=toy_registry)) as one:
        eid = start_episode(one)
        call(one, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
        with TestClient(create_app(settings, registry=toy_registry)) as other:
            other.post(f"/v1/episodes/{eid}/messages", json={"content": "transfer complete"})
            score = other.post(f"/v1/episodes/{eid}/score").json()
        info = one.get(f"/v1/episodes/{eid}").json()
    assert score["status"] == "scored" and score["reward"] == 1
    kinds = [e["kind"] for e in info["events"]]
    assert kinds == ["user_message", "tool_call", "assistant_message", "user_message"]
    assert [e["seq"] for e in info["events"]] == [1, 2, 3, 4] and info["score"] == score


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_concurrent_appends_take_distinct_consecutive_sequence_numbers(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = f"sqlite:///{tmp_path}/s.db" if backend == "sqlite" else request.getfixturevalue("pg_store_url")
    upgrade(url)
    store = Store(make_store_engine(url))
    record = EpisodeRecord(id="ep-1", task_id="t", domain="d", user_kind="scripted", status="active")
    store.create_episode(record, UserMessageEvent(content="hi"))

    def append(worker: int) -> list[int]:
        return [
            store.append_event("ep-1", ToolCallEvent(name="t", arguments={"worker": worker, "i": i}))
            for i in range(25)
        ]

    with ThreadPoolExecutor(4) as pool:
        seqs = [seq for batch in pool.map(append, range(4)) for seq in batch]
    assert sorted(seqs) == list(range(2, 102))
    events = store.events("ep-1")
    assert [e.seq for e in events] == list(range(1, 102))
    calls = [e.event for e in events[1:] if isinstance(e.event, ToolCallEvent)]
    assert sorted((c.arguments["worker"], c.arguments["i"]) for c in calls) == [
        (w, i) for w in range(4) for i in range(25)
    ]
    store.engine.dispose()


def test_every_event_is_persisted_before_the_response(
    settings: Settings, toy_registry: DomainRegistry
) -> None:
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        eid = start_episode(client)
        call(client, eid, "get_account", account_id="AC-0001")
        client.post(f"/v1/episodes/{eid}/messages", json={"content": "hello"})
        # a second app on the same store sees everything at once
        with TestClient(create_app(settings, registry=toy_registry)) as other:
            kinds = [e["kind"] for e in other.get(f"/v1/episodes/{eid}").json()["events"]]
    assert kinds == ["user_message", "tool_call", "assistant_message", "user_message"]


def test_restart_loses_no_episode(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    """SQLite sandboxes live in memory; a new server rebuilds them from the event log."""
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", sandbox_url="sqlite://")
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        eid = start_episode(client)
        call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
        refused = call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=10**9)
        assert refused["error"]
    with TestClient(create_app(settings, registry=toy_registry)) as restarted:
        assert call(restarted, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        restarted.post(f"/v1/episodes/{eid}/messages", json={"content": "transfer complete"})
        assert restarted.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1
