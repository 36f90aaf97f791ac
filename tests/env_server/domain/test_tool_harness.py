"""The tool-test harness (`tests/domain_sandbox.py`) runs tools through the server's execution code.

So a domain's tool tests meet what an agent meets: column-length refusals, the database's refusals, the
read-only rollback of read tools, and the sandbox's ID counters.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY
from sqlalchemy.orm import Session

from env_server.domain import FIRST_GENERATED_ID, ToolContext, ToolError, tool
from tests.domain_sandbox import count_rows, run_tool, seeded_session
from tests.toy_domain import domain
from tests.toy_domain.models import Account, Ticket


@pytest.fixture
def session() -> Iterator[Session]:
    with seeded_session(domain) as s:
        yield s


def test_a_value_longer_than_its_column_is_refused_and_nothing_is_written(session: Session) -> None:
    with pytest.raises(ToolError, match=r"^tickets\.note takes at most 200 characters \(201 given\)$"):
        run_tool(session, domain, "open_ticket", account_id="AC-0001", topic="fees", note="x" * 201)
    assert count_rows(session, Ticket) == 0


def test_generated_ids_come_from_the_sandbox_counter(session: Session) -> None:
    first = run_tool(session, domain, "open_ticket", account_id="AC-0001", topic="fees")
    second = run_tool(session, domain, "open_ticket", account_id="AC-0001", topic="fraud")
    assert (first, second) == (f"TK-{FIRST_GENERATED_ID}", f"TK-{FIRST_GENERATED_ID + 1}")
    assert session.get_one(Ticket, second).topic == "fraud"  # the test's session sees the call's writes


def test_a_read_tool_that_writes_is_a_logged_server_bug_charged_to_the_call_and_rolled_back(
    session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    @tool(kind="read")
    def rename(ctx: ToolContext, account_id: str) -> str:
        """Rename an account (wrongly declared as a read).

        Args:
            account_id: the account.
        """
        ctx.session.get_one(Account, account_id).owner = "renamed"
        return "done"

    with_rename = dataclasses.replace(domain, tools=[*domain.tools, rename])
    bugs = (
        REGISTRY.get_sample_value("groundstate_tool_bugs_total", {"domain": domain.name, "tool": "rename"})
        or 0
    )
    with (
        caplog.at_level(logging.ERROR, logger="env_server.execution.calls"),
        pytest.raises(
            ToolError, match=r"could not handle these arguments \(RuntimeError\); nothing was changed"
        ),
    ):
        run_tool(session, with_rename, "rename", account_id="AC-0001")
    assert "server bug: tool toybank.rename" in caplog.text and "read-only tool changed rows" in caplog.text
    after = REGISTRY.get_sample_value(
        "groundstate_tool_bugs_total", {"domain": domain.name, "tool": "rename"}
    )
    assert after == bugs + 1
    assert session.get_one(Account, "AC-0001").owner == "owner 1"
