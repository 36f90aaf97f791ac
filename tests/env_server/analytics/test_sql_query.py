"""Analytics episodes over HTTP: read-only SQL, refusals with clear errors, execution-accuracy scoring."""

import re

import pytest
from fastapi.testclient import TestClient

from env_server.domain import ToolError
from env_server.execution import check_select
from tests.factories import call, start_episode

TABLES = ["accounts", "transfers"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE accounts SET balance_cents = 0", "only SELECT"),
        ("DELETE FROM accounts", "only SELECT"),
        ("SELECT 1; DROP TABLE accounts", "exactly one"),
        ("SELECT * FROM gs_e_other.accounts", "schema-qualified"),
        ("SELECT * FROM sqlite_master", "unknown table"),
        ("SELECT * FROM pg_catalog.pg_tables", "schema-qualified"),
        ("SELECT pg_read_file('/etc/passwd')", "not allowed"),
        ("WITH x AS (DELETE FROM accounts RETURNING *) SELECT * FROM x", "only SELECT"),
        ("SELECT * FROM (", "parse"),
        ("PRAGMA query_only = 0", "only SELECT"),
    ],
)
def test_guard_refuses_anything_but_one_select(sql: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        check_select(sql, TABLES, "postgres")


def test_guard_accepts_ctes_joins_and_aggregates() -> None:
    check_select(
        "WITH big AS (SELECT * FROM accounts WHERE balance_cents > 100) "
        "SELECT b.status, COUNT(*) FROM big b JOIN transfers t ON t.source_id = b.id GROUP BY b.status",
        TABLES,
        "sqlite",
    )


def test_sql_query_returns_rows_and_submit_answer_scores(client: TestClient) -> None:
    eid = start_episode(client, "toybank-analytics-004")
    tools = {
        t["function"]["name"]
        for t in client.get(f"/v1/episodes/{eid}").json()["events"]
        and client.post("/v1/episodes", json={"task_id": "toybank-analytics-004"}).json()["tools"]
    }
    assert {"sql_query", "submit_answer"} <= tools
    out = call(
        client, eid, "sql_query", sql="SELECT COUNT(*) AS n FROM accounts WHERE balance_cents > 400000"
    )
    assert out["output"]["columns"] == ["n"]
    n = out["output"]["rows"][0][0]
    call(client, eid, "submit_answer", rows=[[n]])
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 1 and {c["name"] for c in score["checks"]} == {"state", "answer"}


def test_wrong_answer_scores_zero(client: TestClient) -> None:
    eid = start_episode(client, "toybank-analytics-004")
    call(client, eid, "submit_answer", rows=[[-1]])
    score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["reward"] == 0
    assert next(c for c in score["checks"] if c["name"] == "answer")["passed"] is False


def test_write_through_sql_is_refused_and_state_is_unchanged(client: TestClient) -> None:
    eid = start_episode(client, "toybank-analytics-004")
    refused = call(client, eid, "sql_query", sql="UPDATE accounts SET balance_cents = 0")
    assert "only SELECT" in refused["error"]
    bad_column = call(client, eid, "sql_query", sql="SELECT nope FROM accounts")
    assert "the database refused the query" in bad_column["error"]
    assert client.get(f"/v1/episodes/{eid}").json()["diff"] == []


def test_database_itself_refuses_writes_in_a_readonly_connection(client: TestClient) -> None:
    """The second lock: even a statement that got past the parser cannot write."""
    eid = start_episode(client, "toybank-analytics-004")
    service = client.app.state.episodes  # type: ignore[attr-defined]
    record, task, domain = service._active(eid)
    sandbox = service._sandbox(record, task, domain)
    refused = r"(?i)read.?only|not authorized|permission denied"  # query_only, the authorizer, the role
    with pytest.raises(Exception, match=refused), sandbox.readonly_connection(1000) as conn:
        conn.exec_driver_sql("UPDATE accounts SET balance_cents = 0")


def test_stateless_scoring_of_an_analytics_trajectory(client: TestClient) -> None:
    gold = client.post(
        "/v1/score",
        json={
            "task_id": "toybank-analytics-005",
            "tool_calls": [
                {
                    "name": "sql_query",
                    "arguments": {"sql": "SELECT status, SUM(balance_cents) FROM accounts GROUP BY status"},
                }
            ],
        },
    ).json()
    rows = gold["tool_results"][0]["output"]["rows"]
    assert gold["reward"] == 0  # no answer submitted
    body = {
        "task_id": "toybank-analytics-005",
        "tool_calls": [{"name": "submit_answer", "arguments": {"rows": rows}}],
    }
    assert client.post("/v1/score", json=body).json()["reward"] == 1


#: A string of 2**n characters, built by doubling (allowed functions only): what an agent can grow a cell to.
DOUBLED = "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r WHERE n < {n}) "


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        (DOUBLED + "SELECT s FROM r WHERE n = 21", "too big|per cell"),  # one 2 MB cell
        (DOUBLED + "SELECT a.owner || (SELECT s FROM r WHERE n = 12) FROM accounts a", "at most 256,000"),
    ],
)
def test_results_are_bounded_in_bytes_with_a_clear_tool_error(client: TestClient, sql: str, why: str) -> None:
    eid = start_episode(client, "toybank-analytics-004")
    n = 21 if "n = 21" in sql else 12
    result = call(client, eid, "sql_query", sql=sql.format(n=n))
    assert result["error"] and re.search(why, result["error"]), result["error"]


def test_the_engine_bounds_what_the_guard_would_let_through(client: TestClient) -> None:
    """Below the guard: a gigabyte string fails at once in the engine, and a big cell is capped."""
    eid = start_episode(client, "toybank-analytics-004")
    service = client.app.state.episodes  # type: ignore[attr-defined]
    record, task, domain = service._active(eid)
    sandbox = service._sandbox(record, task, domain)
    huge = "SELECT zeroblob(1000000000)" if sandbox.dialect == "sqlite" else "SELECT repeat('x', 5000000)"
    with pytest.raises(ToolError, match=r"too big|per cell"):
        sandbox.readonly_select(huge, 10)


def test_percent_in_a_like_pattern_runs_on_both_backends(client: TestClient) -> None:
    eid = start_episode(client, "toybank-analytics-004")
    result = call(client, eid, "sql_query", sql="SELECT count(*) FROM accounts WHERE owner LIKE '%owner 1%'")
    assert result["error"] is None and result["output"]["rows"] == [[11]], result
