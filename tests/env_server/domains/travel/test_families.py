"""Travel scenario families and analytics tasks: generated tasks validate, stay off benchmark entities, vary
their outcome with the draw, compute amounts as the hand-written tasks do, and are reproducible; the analytics
benchmark is large, portable and answers something.

The domain is built with its families here (`dataclasses.replace`), so these tests do not depend on the
domain package registering them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime
from functools import cache
from typing import Any

import pytest

from env_server.domain import ScenarioFamily, dollars
from env_server.domains.travel import domain as base_domain
from env_server.domains.travel.families import FAMILIES
from env_server.domains.travel.families._policy import (
    COMPENSATION_CENTS,
    COMPENSATION_TIER_BONUS_CENTS,
    compensation_due,
    refund_percent,
)
from env_server.domains.travel.seed import _COMPENSATION, _TIER_COMPENSATION_BONUS
from env_server.generation import Draw, entity_ids, generate
from env_server.sandbox.sqlite import SQLiteSandboxEngine
from env_server.scoring.scorer import Scorer
from shared.tasks import Task
from tests.domain_families import (
    assert_portable_analytics,
    assert_valid,
    family_builds,
    generator_state,
    kept_tasks,
)

domain = dataclasses.replace(base_domain, families=FAMILIES)
FAMILY = {f.name: f for f in FAMILIES}
PER_FAMILY = 2
BUILDS = 30


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    """Two validated draws per family (each with its own RNG seed), from one generator run."""
    return list(generate(domain, n=PER_FAMILY * len(FAMILIES), seed=7, workers=1))


def _seed_view() -> Any:
    """The generator's per-process state for this module's domain object: seed rows and benchmark IDs."""
    return generator_state(domain)


@cache
def _builds(name: str, seed: int = 11, n: int = BUILDS) -> tuple[Task, ...]:
    """`n` unvalidated builds of one family (unavailable draws skipped)."""
    return tuple(family_builds(domain, FAMILY[name], seed, n))


def _writes(actions: list[Any]) -> list[Any]:
    return [a for a in actions if domain.tools_by_name[a.name].kind == "write"]


def test_at_least_eight_families_cover_the_policy_rules() -> None:
    actions = [f for f in FAMILIES if f.kind == "action"]
    analytics = [f for f in FAMILIES if f.kind == "analytics"]
    assert len(actions) >= 8 and len(analytics) >= 1
    assert len(FAMILY) == len(FAMILIES)
    covered = {rule for f in FAMILIES for rule in f.covers}
    assert {f"R{n}" for n in (*range(1, 13), 16, 17)} <= covered
    assert "communicate" in covered and all("analytics" in f.covers for f in analytics)


def test_every_family_yields_tasks_that_pass_validation(draws: list[Draw]) -> None:
    kept = Counter(d.family for d in draws if d.task is not None)
    assert all(kept[f.name] >= PER_FAMILY - 1 for f in FAMILIES), kept
    assert sum(kept.values()) == PER_FAMILY * len(FAMILIES)
    kept_tasks(draws, domain)


def test_generated_tasks_revalidate_on_a_fresh_scorer(draws: list[Draw]) -> None:
    scorer = Scorer(SQLiteSandboxEngine(max_templates=8))
    firsts = {d.family: d.task for d in reversed(draws) if d.task is not None}
    for name in ("delay-compensation", "analytics-commercial"):
        assert_valid(firsts[name], domain, scorer)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_builds_never_mention_a_benchmark_entity(family: ScenarioFamily) -> None:
    benchmark = _seed_view().benchmark_ids
    tasks = _builds(family.name)
    assert len(tasks) >= BUILDS * 0.8
    for task in tasks:
        leaked = set(entity_ids(task.model_dump(mode="json"))) & benchmark
        assert not leaked, (task.id, sorted(leaked))
        fresh = {
            i for rows in task.initial_patch.values() for r in rows for i in entity_ids(list(r.values()))
        }
        assert all(70000 <= int(i.split("-")[1]) < 90000 for i in fresh - _seed_view().seed_ids)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_builds_are_reproducible_per_seed(family: ScenarioFamily) -> None:
    first = _builds.__wrapped__(family.name, seed=5, n=4)
    assert first == _builds.__wrapped__(family.name, seed=5, n=4)
    assert first != _builds.__wrapped__(family.name, seed=6, n=4)


def test_a_generator_run_is_reproducible(draws: list[Draw]) -> None:
    again = list(generate(domain, n=4, seed=7, workers=1))
    assert [d.task for d in again] == [d.task for d in draws[: len(again)]]


def _outcome(task: Task) -> str:
    """The decisive write of the gold, or `refusal` when the gold changes nothing."""
    writes = [a.name for a in _writes(task.gold_actions) if a.name != "verify_passenger_identity"]
    if not writes:
        return "refusal"
    last = task.gold_actions[-1]
    if last.name == "change_flight":
        return "waived" if last.arguments.get("waive_fees") else "paid"
    return writes[-1] if len(writes) == 1 else "multi"


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("change-fee-by-fare", {"paid"}),
        ("basic-no-change", {"refusal"}),
        ("disruption-rebook", {"waived", "paid", "refusal"}),
        ("delay-compensation", {"issue_compensation", "request_supervisor_review", "refusal"}),
        ("cancel-refund", {"cancel_reservation", "request_supervisor_review"}),
        ("travellers-fixed", {"book_reservation", "update_traveler", "refusal"}),
        ("baggage-allowance", {"add_checked_bags", "multi"}),
        ("identity-then-change", {"paid", "refusal"}),
        ("change-quote", {"paid", "refusal"}),
        ("multi-step", {"multi"}),
    ],
)
def test_the_draw_decides_between_the_policy_outcomes(family: str, expected: set[str]) -> None:
    tasks = _builds(family)
    assert set(map(_outcome, tasks)) == expected
    for task in tasks:
        writes = _writes(task.gold_actions)
        assert writes or task.wrong_actions, task.id
        assert not writes or writes[0].name == "verify_passenger_identity", task.id
        assert task.user.script and task.description and task.difficulty_tags


def _fare_of(task: Task) -> str:
    return str(task.initial_patch["reservations"][0]["fare_class"])


def test_fare_classes_drive_changes_and_refunds() -> None:
    assert {_fare_of(t) for t in _builds("change-fee-by-fare")} == {"STANDARD", "FLEX", "BUSINESS"}
    assert {_fare_of(t) for t in _builds("basic-no-change")} == {"BASIC"}
    for task in _builds("disruption-rebook"):
        flight = task.initial_patch["flights"][0]
        disrupted = flight["status"] == "cancelled" or flight["delay_minutes"] >= 180
        assert (_outcome(task) == "waived") == disrupted, task.id
        if _outcome(task) == "refusal":
            assert _fare_of(task) == "BASIC"
    refunds = Counter()
    for task in _builds("cancel-refund", n=60):
        cancel = task.gold_actions[-1]
        value = sum(s["fare_cents"] for s in task.initial_patch["segments"]) * len(
            task.initial_patch["travelers"]
        )
        if cancel.name == "cancel_reservation":
            refunds[round(cancel.arguments["refund_cents"] * 100 / value)] += 1
            assert _fare_of(task) != "BASIC" or cancel.arguments["refund_cents"] in (0, value)
        else:
            assert cancel.arguments["amount_cents"] == value and task.wrong_actions
    assert {0, 50, 75, 100} <= set(refunds), refunds


def test_compensation_follows_rules_9_to_11() -> None:
    amounts = Counter()
    for task in _builds("delay-compensation", n=60):
        flight = task.initial_patch["flights"][0]
        tier = next((a["tier"] for a in task.initial_patch.get("loyalty_accounts", [])), None)
        due = compensation_due(flight, len(task.initial_patch["travelers"]), tier)
        last = task.gold_actions[-1]
        if flight["disruption_cause"] in ("weather", "air_traffic") or (
            flight["status"] == "landed" and flight["delay_minutes"] < 180
        ):
            assert due == 0 and _outcome(task) == "refusal" and task.wrong_actions
        elif due > 50_000:
            assert last.name == "request_supervisor_review" and last.arguments["amount_cents"] == due
        else:
            assert last.name == "issue_compensation" and last.arguments["amount_cents"] == due
        amounts[last.name] += 1
    assert len(amounts) == 3
    # The figures are the seed's own (rule 10).
    assert _COMPENSATION == {"delay_3h": 10000, "delay_6h": 20000, "cancelled": 25000}
    assert COMPENSATION_CENTS == {"delay": 10000, "long_delay": 20000, "cancelled": 25000}
    assert COMPENSATION_TIER_BONUS_CENTS == _TIER_COMPENSATION_BONUS


def test_bag_fees_count_existing_bags_and_the_tier_bonus() -> None:
    fees = set()
    for task in _builds("baggage-allowance", n=60):
        fare = _fare_of(task)
        tier = next((a["tier"] for a in task.initial_patch.get("loyalty_accounts", [])), "member")
        allowance = {"BASIC": 0, "STANDARD": 1, "FLEX": 1, "BUSINESS": 2}[fare]
        allowance += {"member": 0, "silver": 1, "gold": 1, "platinum": 2}[tier]
        for action in task.gold_actions[2:]:
            bags = task.initial_patch.get("baggage", [])
            had = sum(b["quantity"] for b in bags if b["traveler_id"] == action.arguments["traveler_id"])
            over = max(0, had + action.arguments["quantity"] - allowance) - max(0, had - allowance)
            assert action.arguments["fee_cents"] == 5000 * over, task.id
            assert had + action.arguments["quantity"] <= 4
            fees.add(action.arguments["fee_cents"])
    assert 0 in fees and max(fees) >= 10_000


def test_quotes_and_multi_steps() -> None:
    for task in _builds("change-quote"):
        assert len(task.communicate) == 1 and task.communicate[0].startswith("$")
        assert (_outcome(task) == "refusal") == bool(task.wrong_actions)
    for task in _builds("multi-step"):
        assert len(_writes(task.gold_actions)) >= 4, task.id  # the identity check and three or more
    assert dollars(15000) == "$150" and dollars(123456) == "$1,234.56"


def _state(task: Task) -> dict[str, dict[str, dict[str, Any]]]:
    """Seed rows with the task's patch laid over them, by table and primary key (single-column keys)."""
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for name in ("fare_classes", "flights", "loyalty_accounts", "reservations", "travelers", "segments"):
        rows = _seed_view().seed_tables[name]
        (key,) = (c.name for c in domain.metadata.tables[name].primary_key.columns)
        tables[name] = {str(r[key]): dict(r) for r in rows}
        for row in task.initial_patch.get(name, []):
            tables[name].setdefault(str(row[key]), {}).update(row)
    return tables


def test_policy_helpers_agree_with_every_hand_written_refund_and_compensation() -> None:
    checked = 0
    for task in base_domain.tasks:
        for action in task.gold_actions:
            if action.name not in ("cancel_reservation", "issue_compensation", "request_supervisor_review"):
                continue
            if action.arguments.get("category") == "refund_exception":
                continue
            state = _state(task)
            rid = action.arguments["reservation_id"]
            reservation = state["reservations"][rid]
            travellers = sum(t["reservation_id"] == rid for t in state["travelers"].values())
            segments = sorted(
                (s for s in state["segments"].values() if s["reservation_id"] == rid), key=lambda s: s["seq"]
            )
            flights = [state["flights"][s["flight_id"]] for s in segments]
            holder = reservation["holder_id"]
            tier = next(
                (a["tier"] for a in state["loyalty_accounts"].values() if a["passenger_id"] == holder), None
            )
            if action.name == "cancel_reservation":
                pct = refund_percent(
                    state["fare_classes"][reservation["fare_class"]],
                    datetime.fromisoformat(reservation["booked_at"]),
                    datetime.fromisoformat(flights[0]["departure_at"]),
                    any(f["status"] == "cancelled" for f in flights),
                )
                expected = sum(s["fare_cents"] for s in segments) * travellers * pct // 100
            elif action.name == "issue_compensation":
                expected = compensation_due(state["flights"][action.arguments["flight_id"]], travellers, tier)
            else:
                expected = max(compensation_due(f, travellers, tier) for f in flights)
            assert action.arguments.get("refund_cents", action.arguments.get("amount_cents")) == expected, (
                task.id
            )
            checked += 1
    assert checked >= 15


ANALYTICS = [t for t in base_domain.tasks if t.kind == "analytics"]


def test_analytics_benchmark_size_and_portability() -> None:
    splits = Counter(t.split for t in ANALYTICS)
    assert len(ANALYTICS) >= 22 and splits["test"] >= 14 and splits["train"] >= 8
    built = [t for f in FAMILIES if f.kind == "analytics" for t in _builds(f.name, n=12)]
    tables = domain.metadata.tables.keys()
    for task in [*ANALYTICS, *built]:
        assert not task.gold_actions
        assert_portable_analytics(task, tables)


def test_analytics_tasks_validate_with_non_trivial_answers() -> None:
    scorer = Scorer(SQLiteSandboxEngine(max_templates=8))
    for task in ANALYTICS:
        assert_valid(task, domain, scorer)
        rows = scorer.gold_rows(task, domain)
        assert rows and any(cell not in (0, None) for row in rows for cell in row), task.id
