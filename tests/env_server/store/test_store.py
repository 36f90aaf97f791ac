"""The control-plane store: migrations, persistence before response, and surviving a restart."""

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import inspect

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.store import make_store_engine
from env_server.store.migrate import current, upgrade
from tests.factories import call, start_episode


def test_upgrade_creates_the_tables_at_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    upgrade(url)
    assert current(url) == "0001"
    names = set(inspect(make_store_engine(url)).get_table_names())
    assert {"episodes", "events", "scores", "alembic_version"} <= names


def test_upgrade_on_postgresql(pg_url: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("DROP DATABASE IF EXISTS groundstate_store_test"))
        conn.execute(text("CREATE DATABASE groundstate_store_test"))
    url = pg_url.rsplit("/", 1)[0] + "/groundstate_store_test"
    try:
        upgrade(url)
        assert current(url) == "0001"
    finally:
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE IF EXISTS groundstate_store_test WITH (FORCE)"))
        admin.dispose()


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
