"""PostgreSQL slots: vacuumed in the background every few uses, and pruned when no server can use them."""

import dataclasses
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from env_server.execution import run_tool
from env_server.sandbox.postgres import PostgresSandboxEngine, slots
from env_server.sandbox.postgres.sandbox import PostgresSandbox
from env_server.sandbox.template import Template
from groundstate.cli import app
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
    monkeypatch.setattr(slots, "VACUUM_EVERY", 1)  # every release vacuums the slot
    monkeypatch.setattr(slots, "REGISTRY_VACUUM_EVERY", 1)  # and the slot registry
    engine = PostgresSandboxEngine(pg_url)
    template = Template(domain=toy_domain)
    try:
        sandbox = engine.create(uuid.uuid4().hex, template)
        schema = sandbox.schema  # type: ignore[attr-defined]
        before = vacuum_count(engine, schema), registry_vacuums(engine)
        sandbox.dispose()
        engine.slots._maintenance.submit(lambda: None).result(timeout=60)  # the queue is done up to here
        assert vacuum_count(engine, schema) > before[0]
        assert registry_vacuums(engine) > before[1]
    finally:
        engine.close()


def _schemas(engine: PostgresSandboxEngine) -> set[str]:
    with engine.engine.connect() as conn:
        return set(conn.scalars(text("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'gs\\_%'")))


def test_prune_drops_what_older_domain_versions_left_and_keeps_what_servers_use(fresh_pg_url: str) -> None:
    """A changed domain (new fingerprint) leaves its base schema and slot pool behind; prune clears them."""
    old = dataclasses.replace(toy_domain, seed_value=toy_domain.seed_value + 1)
    assert old.fingerprint != toy_domain.fingerprint
    engine = PostgresSandboxEngine(fresh_pg_url)
    try:
        old_held = engine.create("old-held", Template(domain=old))
        engine.create("old-done", Template(domain=old)).dispose()  # a second slot of the old pool, free
        current = [engine.create(f"new-{i}", Template(domain=toy_domain)) for i in range(3)]
        held_now = current.pop()
        for sandbox in current:
            sandbox.dispose()
        before = _schemas(engine)

        report = engine.prune([Template(domain=toy_domain)], keep_free=1, dry_run=True)
        assert _schemas(engine) == before  # a dry run drops nothing
        report = engine.prune([Template(domain=toy_domain)], keep_free=1)
        after = _schemas(engine)
    finally:
        engine.close()
    old_base = next(s for s in before if s.startswith("gs_b_") and s not in after)
    assert report.stale_schemas == [old_base]
    assert len(report.surplus_slots) == 1 + 1  # the old domain's free slot, and one current beyond keep_free
    assert report.kept_slots == 1 and report.held_slots == 2 and report.orphaned_slots == []
    assert {old_held.schema, held_now.schema} <= after  # type: ignore[attr-defined]
    assert before - after == {old_base, *report.surplus_slots}


def test_pruned_template_is_rebuilt_by_a_server_that_had_it_ready(fresh_pg_url: str) -> None:
    serving = PostgresSandboxEngine(fresh_pg_url)
    operator = PostgresSandboxEngine(fresh_pg_url)
    template = Template(domain=toy_domain, patch={"accounts": [{"id": "AC-0001", "balance_cents": 777}]})
    try:
        serving.create("first", template).dispose()
        operator.prune([], keep_free=0)  # as if no server served this task any more
        sandbox = serving.create("second", template)  # its cached "ready" schema is gone: rebuilt
        _, rows, _ = sandbox.readonly_select(
            "SELECT balance_cents FROM accounts WHERE id = 'AC-0001'", limit=1
        )
        assert rows == [[777]]
    finally:
        serving.close()
        operator.close()


def test_prune_command_reports_and_drops_orphaned_slots(fresh_pg_url: str, toy_site: Path) -> None:
    engine = PostgresSandboxEngine(fresh_pg_url)
    try:
        engine.create("never-disposed", Template(domain=toy_domain))
    finally:
        engine.close()
    dry = CliRunner().invoke(app, ["sandboxes", "prune", "--pg-url", fresh_pg_url, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    said = " ".join(dry.output.split())
    assert "would drop 0 base/template schemas" in said and "1 held by episodes" in said
    done = CliRunner().invoke(app, ["sandboxes", "prune", "--pg-url", fresh_pg_url, "--held-hours", "0"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "1 orphaned slots" in said and "0 held by episodes" in said


def _row_versions(engine: PostgresSandboxEngine, schema: str) -> dict[str, tuple[str, str]]:
    """Each account row's physical version (ctid, xmin) by id: a row that was rewritten gets a new one."""
    with engine.engine.connect() as conn:
        query = f'SELECT id, ctid::text, xmin::text FROM "{schema}".accounts'
        return {str(r[0]): (str(r[1]), str(r[2])) for r in conn.execute(text(query))}


def test_a_slot_reused_for_the_same_template_gets_back_exactly_the_template(fresh_pg_url: str) -> None:
    engine = PostgresSandboxEngine(fresh_pg_url)
    template = Template(domain=toy_domain, patch={"accounts": [{"id": "AC-0001", "balance_cents": 777}]})
    tools = toy_domain.tools_by_name
    try:
        source = engine.schemas.template(template)
        reference = PostgresSandbox("template", template, engine.engine, source).snapshot()
        first = engine.create("first", template)
        # updates and inserts (a transfer row, ID counters): rows the next episode must not see
        for name, args in (
            ("set_balance", {"account_id": "AC-0003", "balance_cents": 1}),
            ("transfer", {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 700}),
            ("freeze_account", {"account_id": "AC-0004"}),
        ):
            assert run_tool(first, tools, name, args).error is None
        assert first.snapshot() != reference
        changed = {"AC-0001", "AC-0002", "AC-0003", "AC-0004"}
        before = {k: v for k, v in _row_versions(engine, first.schema).items() if k not in changed}
        assert len(before) > 10
        first.dispose()

        second = engine.create("second", template)
        assert second.schema == first.schema  # the same slot, claimed again for the same template
        assert second.snapshot() == reference  # holds exactly the template's rows and ID counters
        assert second.changed_rows() == engine.create("third", template).changed_rows()  # nothing logged
        # ... having rewritten only what the first episode changed (a full refill rewrites every row)
        after = _row_versions(engine, second.schema)
        assert {k: v for k, v in after.items() if k not in changed} == before
        again = {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5}
        assert run_tool(second, tools, "transfer", again).output == "TR-90001"  # the counters are back
    finally:
        engine.close()


def test_a_slot_has_roles_of_its_own_made_once_and_dropped_with_it(fresh_pg_url: str) -> None:
    """A slot gets a read-write and a read-only role when it is made; reuse makes none, prune drops them."""
    engine = PostgresSandboxEngine(fresh_pg_url)
    roles = "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles WHERE rolname LIKE :p ORDER BY rolname"
    try:
        first = engine.create("one", Template(domain=toy_domain))
        assert isinstance(first, PostgresSandbox) and first.roles is not None
        first.dispose()
        engine.create("two", Template(domain=toy_domain)).dispose()  # reuses the slot: no new role
        with engine.engine.connect() as conn:
            made = conn.execute(text(roles), {"p": f"{first.schema}%"}).all()
        assert [r.rolname for r in made] == sorted(first.roles)
        assert not any(r.rolsuper or r.rolcanlogin for r in made)
        engine.prune([Template(domain=toy_domain)], keep_free=0)
        with engine.engine.connect() as conn:
            assert conn.execute(text(roles), {"p": f"{first.schema}%"}).all() == []
    finally:
        engine.close()
