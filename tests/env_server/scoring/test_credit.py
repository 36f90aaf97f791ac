"""Per-call credit on crafted trajectories of every built-in domain and of live toy episodes.

Each domain's case names an action task, its gold write that updates an existing row, and a wrong value for
one of that call's arguments: the gold, the wrong value instead of the right one, the wrong value overwritten
by the right one, the gold plus the domain's canary write (a new row with a generated id), the gold without
its update, and an analytics task answered wrongly. Every label and the first deviation are asserted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain import ToolContext, tool
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain as telecom
from env_server.domains.telecom.models import Router, Ticket
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.scoring.trajectory import Call, CustomerCall, Trajectory
from env_server.settings import Settings
from shared.models import ScoreResult
from tests.factories import call, start_episode

#: domain -> (task, index of its gold update call, argument, a wrong value for it)
CASES = {
    "hotel": ("hotel-change-dates-001", "change_booking_dates", "check_out", "2026-10-17"),
    "retail": ("retail-address-change-001", "update_order_address", "address_line", "501 Pike St"),
    "travel": ("travel-multi-step-001", "update_traveler", "first_name", "Olive"),
    "insurance": ("insurance-deductible-001", "change_deductible", "deductible_cents", 50000),
}
GENERATED = re.compile(r"-9\d{4}$")  # generated ids count from 90001


@pytest.fixture(scope="module")
def domains_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app over the built-in domains on SQLite (stateless scoring stores nothing)."""
    store = Path(tmp_path_factory.mktemp("credit")) / "store.db"
    settings = Settings(store_url=f"sqlite:///{store}", sandbox_url="sqlite://")
    registry = DomainRegistry.discover([], only=list(CASES))
    with TestClient(create_app(settings, registry=registry)) as client:
        yield client


def score(client: TestClient, task_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"task_id": task_id, "tool_calls": calls, "messages": []}
    response = client.post("/v1/score", json=body)
    assert response.status_code == 200, response.text
    result = dict(response.json())
    assert result["status"] == "scored" and result["credit"]["version"] == "credit-v1"
    return result


def gold_calls(client: TestClient, task_id: str) -> list[dict[str, Any]]:
    task = client.app.state.registry.task(task_id)  # type: ignore[attr-defined]
    return [{"name": a.name, "arguments": dict(a.arguments)} for a in task.gold_actions]


def labels(result: dict[str, Any]) -> list[str]:
    return [c["label"] for c in result["credit"]["calls"]]


def update_index(calls: list[dict[str, Any]], tool: str) -> int:
    return next(i for i, c in enumerate(calls) if c["name"] == tool)


@pytest.mark.parametrize("domain", sorted(CASES))
def test_gold_calls_are_needed_and_reads_have_no_effect(domains_client: TestClient, domain: str) -> None:
    task_id, tool, _, _ = CASES[domain]
    calls = gold_calls(domains_client, task_id)
    result = score(domains_client, task_id, calls)
    kinds = domains_client.get(f"/v1/domains/{domain}").json()["tool_kinds"]
    reads = {name for name, kind in kinds.items() if kind == "read"}
    for call_, credit in zip(calls, result["credit"]["calls"], strict=True):
        # an identity check writes only to a table the comparison ignores: no effect either
        assert credit["label"] in (("no-effect",) if call_["name"] in reads else ("needed", "no-effect"))
        assert all(change["label"] == "needed" for change in credit["changes"])
    update = result["credit"]["calls"][update_index(calls, tool)]
    assert "updated" in {c["op"] for c in update["changes"]}
    assert result["diff"] == [] and (result["credit"]["first_deviation"] or {}).get("kind") != "call"


@pytest.mark.parametrize("domain", sorted(CASES))
def test_a_wrong_value_is_wrong_and_is_the_first_deviation(domains_client: TestClient, domain: str) -> None:
    task_id, tool, argument, value = CASES[domain]
    calls = gold_calls(domains_client, task_id)
    at = update_index(calls, tool)
    calls[at]["arguments"][argument] = value
    result = score(domains_client, task_id, calls)
    assert result["reward"] == 0 and labels(result)[at] == "wrong"
    assert "wrong" in {c["label"] for c in result["credit"]["calls"][at]["changes"]}
    deviation = result["credit"]["first_deviation"]
    assert deviation["kind"] == "call" and deviation["call_index"] == at, deviation
    assert "the task wants" in deviation["reason"]


@pytest.mark.parametrize("domain", sorted(CASES))
def test_an_update_overwritten_later_is_undone(domains_client: TestClient, domain: str) -> None:
    task_id, tool, argument, value = CASES[domain]
    calls = gold_calls(domains_client, task_id)
    at = update_index(calls, tool)
    calls.insert(at, {"name": tool, "arguments": {**calls[at]["arguments"], argument: value}})
    result = score(domains_client, task_id, calls)
    first, second = result["credit"]["calls"][at : at + 2]
    again = {(c["table"], c["key"], c["column"]) for c in second["changes"] if c["op"] == "updated"}
    overwritten = [c for c in first["changes"] if (c["table"], c["key"], c["column"]) in again]
    assert overwritten and all(c["label"] == "undone" for c in overwritten), first
    if domain == "hotel":  # each date change also books a payment: the first one's stays, a side effect
        assert result["reward"] == 0 and first["label"] in ("wrong", "collateral")
        return
    assert result["diff"] == []  # the right value overwrote the wrong one: the state is right
    assert all(c["label"] == "needed" for c in first["changes"] if c not in overwritten)
    assert first["label"] == ("undone" if len(overwritten) == len(first["changes"]) else "needed")
    assert second["label"] == "needed"
    assert (result["credit"]["first_deviation"] or {}).get("kind") != "call"


@pytest.mark.parametrize("domain", sorted(CASES))
def test_an_unwanted_new_row_is_collateral_under_its_generated_id(
    domains_client: TestClient, domain: str
) -> None:
    task_id = CASES[domain][0]
    canary = domains_client.app.state.registry.domain(domain).canary_action  # type: ignore[attr-defined]
    calls = [*gold_calls(domains_client, task_id), {"name": canary.name, "arguments": dict(canary.arguments)}]
    result = score(domains_client, task_id, calls)
    last = result["credit"]["calls"][-1]
    assert last["label"] == "collateral" and result["reward"] == 0
    added = [c for c in last["changes"] if c["op"] == "added"]
    assert added and all(c["label"] == "collateral" for c in added)
    assert any(GENERATED.search(c["key"]) for c in added), added  # the id the episode generated
    assert all(label in ("needed", "no-effect") for label in labels(result)[:-1])
    deviation = result["credit"]["first_deviation"]
    assert deviation["kind"] == "call" and deviation["call_index"] == len(calls) - 1
    assert "a row the task does not add" in deviation["reason"]


@pytest.mark.parametrize("domain", sorted(CASES))
def test_an_episode_that_stops_early_deviates_at_the_first_missing_change(
    domains_client: TestClient, domain: str
) -> None:
    task_id, tool, _, _ = CASES[domain]
    calls = gold_calls(domains_client, task_id)
    del calls[update_index(calls, tool) :]
    result = score(domains_client, task_id, calls)
    deviation = result["credit"]["first_deviation"]
    assert deviation["kind"] == "missing" and deviation["call_index"] is None
    missing = next(e for e in result["diff"] if e["kind"] == "missing")
    assert missing["table"] in deviation["reason"]


@pytest.mark.parametrize("domain", sorted(CASES))
def test_analytics_answers_and_writes_are_credited(domains_client: TestClient, domain: str) -> None:
    task_id = f"{domain}-analytics-001"
    reads = [
        {"name": "sql_query", "arguments": {"sql": "SELECT 1"}},
        {"name": "submit_answer", "arguments": {"rows": [["not the answer"]]}},
    ]
    result = score(domains_client, task_id, reads)
    assert labels(result) == ["no-effect", "no-effect"]
    deviation = result["credit"]["first_deviation"]
    assert deviation == {"kind": "check", "call_index": 1, "check": "answer", "reason": deviation["reason"]}
    canary = domains_client.app.state.registry.domain(domain).canary_action  # type: ignore[attr-defined]
    written = score(
        domains_client, task_id, [{"name": canary.name, "arguments": dict(canary.arguments)}, *reads]
    )
    assert labels(written) == ["collateral", "no-effect", "no-effect"]
    assert written["credit"]["first_deviation"]["call_index"] == 0


# --- live episodes of the toy domain, on both backends ----------------------------------------------------


def test_a_live_episode_credits_overwrites_wrong_values_and_refusals(client: TestClient) -> None:
    episode = start_episode(client)
    call(client, episode, "get_account", account_id="AC-0001")
    call(client, episode, "set_balance", account_id="AC-0002", balance_cents=777)
    refused = call(client, episode, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=10**7)
    assert refused["error"]
    call(client, episode, "set_balance", account_id="AC-0002", balance_cents=0)
    call(client, episode, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=4000)
    call(client, episode, "freeze_account", account_id="AC-0001")
    credit = client.post(f"/v1/episodes/{episode}/score").json()["credit"]
    assert [c["label"] for c in credit["calls"]] == [
        "no-effect",  # a read
        "undone",  # AC-0002's balance, overwritten by the next set_balance
        "no-effect",  # refused: insufficient funds
        "undone",  # put back to 0, then changed by the transfer
        "wrong",  # the right accounts and a transfer row, the wrong amount
        "collateral",  # freezing an account the task leaves open
    ], credit
    transfer = {(c["table"], c["column"]): c for c in credit["calls"][4]["changes"]}
    assert transfer[("accounts", "balance_cents")]["label"] == "wrong"
    new_row = transfer[("transfers", None)]
    assert new_row["op"] == "added" and new_row["key"] == "TR-90001" and new_row["label"] == "wrong"
    # AC-0002 was off course after call 1, back where it began after call 3: the transfer is decisive
    assert credit["first_deviation"]["kind"] == "call" and credit["first_deviation"]["call_index"] == 4
    assert "the task wants 5000" in credit["first_deviation"]["reason"]
    stored = client.get(f"/v1/episodes/{episode}").json()["score"]
    assert stored["credit"] == credit and stored["grading"]["scorer_version"]


def test_a_successful_episode_has_no_deviation_and_credits_every_write_as_needed(client: TestClient) -> None:
    episode = start_episode(client)
    call(client, episode, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
    client.post(f"/v1/episodes/{episode}/messages", json={"content": "The transfer is complete."})
    result = client.post(f"/v1/episodes/{episode}/score").json()
    assert result["reward"] == 1, result["checks"]
    assert result["credit"]["first_deviation"] is None
    [transfer] = result["credit"]["calls"]
    assert transfer["label"] == "needed" and {c["label"] for c in transfer["changes"]} == {"needed"}
    assert len(transfer["changes"]) == 3  # two balances and the new transfer row: cost follows the rows


def test_credit_replays_the_customers_calls_in_their_place() -> None:
    """An agent write that reads the customer's side is credited with what it did after the customer acted.

    Telecom's own writes never read the customer's tables, so the test adds one that does: it files a
    technician ticket for a router that is off and an `other` ticket for one that is on.
    """
    @tool(kind="write")
    def note_router(ctx: ToolContext, router_id: str) -> str:
        """File a ticket about a router, by what it shows now.

        Args:
            router_id: the router, e.g. "RT-0042".
        """
        router = ctx.get_or_refuse(Router, router_id, f"No router {router_id}")
        category = "other" if router.power == "on" else "technician"
        ctx.insert(
            Ticket(
                ticket_id=ctx.new_id("TK"),
                line_id=router.line_id,
                category=category,
                summary="-",
                created_at=ctx.now,
            )
        )
        return category

    domain = dataclasses.replace(telecom, tools=[*telecom.tools, note_router])
    task = next(t for t in telecom.tasks if t.id == "telecom-router-004")  # RT-0041 starts off
    trajectory = Trajectory.of(
        [
            CustomerCall("restart_router", {"router_id": "RT-0041"}),
            Call("note_router", {"router_id": "RT-0041"}),
        ]
    )
    engine = make_sandbox_engine("sqlite://")
    try:
        credit = Scorer(engine).credit(task, domain, trajectory, ScoreResult(status="scored", reward=0))
    finally:
        engine.close()
    assert len(credit.calls) == 1  # the customer's call is nobody's credit
    (added,) = credit.calls[0].changes
    assert added.table == "tickets" and added.after["category"] == "other"
