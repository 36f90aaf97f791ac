"""The SQL guard: an allow-list over the parsed tree, scoped like SQL; a first filter, never the boundary."""

from __future__ import annotations

import pytest

from env_server.domain import ToolError
from env_server.domain.registry import DomainRegistry
from env_server.execution.sql_guard import check_select

TABLES = {"accounts", "transfers"}


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize(
    "sql",
    [
        "WITH x AS (SELECT * FROM accounts) SELECT * FROM x",
        "WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        "SELECT count(*) FROM accounts WHERE owner LIKE '%x%'",
        "SELECT substr(owner, 1, 2), round(avg(balance_cents) / 100.0, 2) FROM accounts GROUP BY 1",
        "SELECT row_number() OVER (ORDER BY id), CASE WHEN status = 'open' THEN 1 END FROM accounts",
    ],
)
def test_honest_questions_pass(sql: str, dialect: str) -> None:
    check_select(sql, TABLES, dialect)


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("WITH gs_sandbox_slots AS (SELECT 1) SELECT * FROM public.gs_sandbox_slots", "schema-qualified"),
        ("SELECT * FROM (WITH secret AS (SELECT 1) SELECT * FROM secret) s, secret", "unknown table"),
        ("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", "unknown table"),
        ("WITH r AS (SELECT * FROM r) SELECT * FROM r", "unknown table"),
        ("SELECT * FROM generate_series(1, 3)", "only tables"),
        ("SELECT * FROM pg_ls_dir('.')", "only tables"),
        ("SELECT database_to_xml(true, true, '')", "database_to_xml"),
        ("SELECT table_to_xml('accounts', true, true, '')", "table_to_xml"),
        ("SELECT load_extension('x')", "load_extension"),
        ("SELECT set_config('role', 'none', true)", "set_config"),
        ("SELECT * FROM accounts FOR UPDATE", "SELECT"),
        ("SELECT 1; SELECT 2", "exactly one"),
        ("PRAGMA table_info(accounts)", "."),
    ],
)
def test_everything_else_is_refused_with_its_reason(sql: str, why: str, dialect: str) -> None:
    with pytest.raises(ToolError, match=why):
        check_select(sql, TABLES, dialect)


def test_every_shipped_gold_sql_passes_on_both_dialects() -> None:
    registry = DomainRegistry.discover([])
    checked = 0
    for task in registry.tasks():
        if task.analytics is None:
            continue
        tables = registry.domain(task.domain).metadata.tables.keys()
        for dialect in ("sqlite", "postgres"):
            check_select(task.analytics.gold_sql, tables, dialect)
        checked += 1
    assert checked > 50
