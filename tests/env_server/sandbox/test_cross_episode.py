"""No episode reaches another (PostgreSQL): every known route out of a slot ends in a refusal.

Two layers are tried. Through the API, the agent's `sql_query` must come back as a tool error for every
route. Below the parser, the same statements run straight on the sandbox's read-only connection (as the
slot's `_ro` role, the guard skipped): the database itself must refuse them, or show nothing of another
episode, the registry, the roles or the server's settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain import ToolError
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.factories import call, start_episode

pytestmark = pytest.mark.postgres

ANALYTICS = "toybank-analytics-004"


@pytest.fixture
def pg_client(tmp_path: Any, pg_url: str, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url=pg_url)
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        yield client


def _routes(victim: str) -> list[str]:
    """Every route to another slot, the registry, the roles or the server we know of; `victim` a slot."""
    return [
        "SELECT * FROM public.gs_sandbox_slots",
        "SELECT * FROM gs_sandbox_slots",
        f'SELECT * FROM "{victim}".accounts',
        f"SELECT * FROM {victim}.accounts",
        "SELECT rolname, rolpassword FROM pg_authid",
        "SELECT rolname, rolpassword FROM pg_catalog.pg_authid",
        "SELECT query FROM pg_stat_activity",
        "SELECT setting FROM pg_settings WHERE name = 'data_directory'",
        "SELECT current_setting('data_directory')",
        "SELECT current_setting('hba_file')",
        "SELECT query_to_xml('SELECT * FROM public.gs_sandbox_slots', true, true, '')",
        f"SELECT query_to_xml('SELECT * FROM {victim}.accounts', true, true, '')",
        "SELECT table_to_xml('public.gs_sandbox_slots', true, true, '')",
        f"SELECT table_to_xml('{victim}.accounts', true, true, '')",
        f"SELECT schema_to_xml('{victim}', true, true, '')",
        "SELECT database_to_xml(true, true, '')",
        "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)",
        "COPY accounts TO STDOUT",
        "SELECT lo_import('/etc/passwd')",
        "SELECT lo_get(1)",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT * FROM pg_ls_dir('.')",
        "SET ROLE postgres",
        "RESET ROLE",
        "SET SESSION AUTHORIZATION postgres",
        "SELECT set_config('role', 'none', false)",
        "SELECT set_config('search_path', 'public', true)",
        "SELECT 1; RESET ROLE; SELECT * FROM public.gs_sandbox_slots",
        "WITH gs_sandbox_slots AS (SELECT 1) SELECT * FROM public.gs_sandbox_slots",
        f"WITH x AS (SELECT 1) SELECT * FROM (SELECT * FROM {victim}.accounts) AS accounts",
        "CREATE TEMP TABLE t AS SELECT 1",
    ]


def _victim(client: TestClient) -> tuple[str, str]:
    """Another live episode that changed a row, and its slot's schema."""
    victim = start_episode(client, "toybank-transfer-001")
    call(client, victim, "set_balance", account_id="AC-0007", balance_cents=123456789)
    schema = client.app.state.episodes.sandboxes.slots.held(victim).schema  # type: ignore[attr-defined]
    return victim, str(schema)


def test_every_route_to_another_slot_is_a_tool_error(pg_client: TestClient) -> None:
    _, schema = _victim(pg_client)
    attacker = start_episode(pg_client, ANALYTICS)
    for sql in _routes(schema):
        result = call(pg_client, attacker, "sql_query", sql=sql)
        assert result["error"], f"{sql} -> {str(result['output'])[:300]}"
        assert "123456789" not in str(result)


def test_the_database_refuses_what_the_parser_would_let_through(pg_client: TestClient) -> None:
    """Below the guard: the slot's read-only role is the boundary."""
    _, schema = _victim(pg_client)
    attacker = start_episode(pg_client, ANALYTICS)
    service = pg_client.app.state.episodes  # type: ignore[attr-defined]
    record, task, domain = service._active(attacker)
    sandbox = service._sandbox(record, task, domain)
    for sql in _routes(schema):
        try:
            _, rows, _ = sandbox.readonly_select(sql, 200)
        except ToolError:
            continue
        text = str(rows)
        # what a catalog view shows a role without rights: nothing of anyone else
        leaks = ("123456789", schema, "SCRAM-SHA", "md5", "pg_hba", "postgresql.conf", "/var/lib", "SELECT")
        assert not [x for x in leaks if x in text], f"{sql} -> {text[:300]}"
    own = sandbox.readonly_select("SELECT balance_cents FROM accounts WHERE id = 'AC-0007'", 10)
    assert own[1] != [[123456789]]


def test_percent_in_agent_sql_is_a_character_on_postgres(pg_client: TestClient) -> None:
    episode = start_episode(pg_client, ANALYTICS)
    result = call(pg_client, episode, "sql_query", sql="SELECT count(*) FROM accounts WHERE id LIKE '%C-0%'")
    assert result["error"] is None and result["output"]["rows"][0][0] > 0, result


def test_a_statement_past_its_time_limit_is_a_tool_error(pg_client: TestClient) -> None:
    episode = start_episode(pg_client, ANALYTICS)
    sql = "SELECT count(*) FROM accounts a, accounts b, accounts c, accounts d, accounts e, accounts f"
    result = call(pg_client, episode, "sql_query", sql=sql)
    assert result["error"] and "time limit" in result["error"], result
