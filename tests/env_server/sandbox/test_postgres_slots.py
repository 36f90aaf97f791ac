"""PostgreSQL slots are vacuumed every few uses, in the background, not in the request that frees them."""

import uuid

import pytest
from sqlalchemy import text

from env_server.sandbox import postgresql
from env_server.sandbox.postgresql import PostgresSandboxEngine
from env_server.sandbox.template import Template
from tests.toy_domain import domain as toy_domain

pytestmark = pytest.mark.postgres

VACUUMS = "SELECT coalesce(sum(vacuum_count), 0) FROM pg_stat_user_tables WHERE schemaname = :s"


def vacuum_count(engine: PostgresSandboxEngine, schema: str) -> int:
    with engine.engine.connect() as conn:
        conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
        return int(conn.execute(text(VACUUMS), {"s": schema}).scalar_one())


def registry_vacuums(engine: PostgresSandboxEngine) -> int:
    with engine.engine.connect() as conn:
        conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
        query = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'gs_sandbox_slots'"
        return int(conn.execute(text(query)).scalar_one())


def test_freed_slots_are_vacuumed_by_the_maintenance_thread(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgresql, "VACUUM_EVERY", 1)  # every release vacuums the slot
    monkeypatch.setattr(postgresql, "REGISTRY_VACUUM_EVERY", 1)  # and the slot registry
    engine = PostgresSandboxEngine(pg_url)
    template = Template(domain=toy_domain)
    try:
        sandbox = engine.create(uuid.uuid4().hex, template)
        schema = sandbox.schema  # type: ignore[attr-defined]
        before = vacuum_count(engine, schema), registry_vacuums(engine)
        sandbox.dispose()
        engine._maintenance.submit(lambda: None).result(timeout=60)  # the queue is done up to here
        assert vacuum_count(engine, schema) > before[0]
        assert registry_vacuums(engine) > before[1]
    finally:
        engine.close()
