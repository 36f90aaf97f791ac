"""The hotel scenario families and analytics tasks.

Generation runs once per seed (module fixtures) and every kept draw has passed `validate_task` inside the
generator; the policy encoding the families use is checked against the decisions of the hand-written tasks.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date
from typing import Any, cast

import pytest

from env_server.domain._family import benchmark_entity_ids
from env_server.domains.hotel import domain
from env_server.domains.hotel.families import FAMILIES
from env_server.domains.hotel.families._rules import (
    APPROVAL_THRESHOLD_CENTS,
    change_fee_applies,
    days_before,
    extra_is_complimentary,
    goodwill_points,
    refund_percent,
)
from env_server.domains.hotel.models import HotelTier, LoyaltyTier, RatePlan
from env_server.domains.hotel.seed import HOTELS
from env_server.generation import Draw, entity_ids, generate
from shared.tasks import Task

SEEDS = (11, 12)
PER_FAMILY = 2


@pytest.fixture(scope="module")
def runs() -> dict[int, list[Draw]]:
    """Every draw of one generation run per seed, enough for each family to be drawn at least twice."""
    n = PER_FAMILY * len(FAMILIES)
    return {seed: list(generate(domain, n=n, seed=seed, workers=1)) for seed in SEEDS}


def _kept(draws: list[Draw]) -> list[Task]:
    return [d.task for d in draws if d.task is not None]


def test_the_domain_declares_families_covering_every_policy_rule() -> None:
    assert domain.families == FAMILIES
    assert len(FAMILIES) >= 8
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
    rules = {int(n) for n in re.findall(r"^(\d+)\. \*\*", domain.policy, flags=re.MULTILINE)}
    covered = {int(r[1:]) for f in FAMILIES for r in f.covers if r.startswith("R")}
    assert covered == rules
    assert any(f.kind == "analytics" for f in FAMILIES)
    assert any("communicate" in f.covers for f in FAMILIES)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_family_yields_valid_tasks_at_a_high_keep_rate(runs: dict[int, list[Draw]], seed: int) -> None:
    draws = runs[seed]
    kept = Counter(d.family for d in draws if d.task is not None)
    assert all(kept[f.name] >= 1 for f in FAMILIES), kept
    assert sum(kept.values()) == PER_FAMILY * len(FAMILIES)
    assert len(_kept(draws)) >= 0.8 * len(draws), [d.discarded for d in draws if d.task is None]
    kinds = {f.name: f.kind for f in FAMILIES}
    for d in draws:
        if d.task is None:
            continue
        assert (d.task.split, d.task.domain, d.task.kind) == ("train", "hotel", kinds[d.family])
        assert d.task.id.startswith(f"hotel-gen-{d.family}-")
        assert d.task.gold_actions or d.task.analytics is not None
        assert 2 <= len(d.task.user.script) <= 4


def test_generated_tasks_only_use_fresh_or_untouched_entities(runs: dict[int, list[Draw]]) -> None:
    benchmark = benchmark_entity_ids(domain.tasks)
    assert benchmark
    for draws in runs.values():
        assert not [d.discarded for d in draws if d.discarded and d.discarded.startswith("uses benchmark")]
        for task in _kept(draws):
            assert not set(entity_ids(task.model_dump(mode="json"))) & benchmark, task.id


def test_generated_refusals_carry_a_wrong_trajectory_and_the_set_mixes_outcomes(
    runs: dict[int, list[Draw]],
) -> None:
    tasks = [t for draws in runs.values() for t in _kept(draws)]
    writes = {t.name for t in domain.tools if t.kind == "write"}
    refusals = [t for t in tasks if t.kind == "action" and not {a.name for a in t.gold_actions} & writes]
    assert refusals and all(t.wrong_actions for t in refusals)
    assert any(t.communicate for t in tasks)
    assert {t.kind for t in tasks} == {"action", "analytics"}


def test_generation_is_reproducible_for_a_seed(runs: dict[int, list[Draw]]) -> None:
    n = len(FAMILIES)
    again = _kept(list(generate(domain, n=n, seed=SEEDS[0], workers=1)))
    assert again == _kept(runs[SEEDS[0]])[:n]
    first = {t.id: t for t in _kept(runs[SEEDS[0]])}
    other = {t.id: t for t in _kept(runs[SEEDS[1]])}
    assert any(first[i] != other[i] for i in first.keys() & other.keys())


# -- the hand-written analytics tasks ----------------------------------------------------------------------

ANALYTICS = [t for t in domain.tasks if t.kind == "analytics"]


def test_there_are_enough_analytics_tasks_in_each_split() -> None:
    splits = Counter(t.split for t in ANALYTICS)
    assert len(ANALYTICS) >= 22 and splits["test"] >= 14 and splits["train"] >= 8
    for task in ANALYTICS:
        assert re.fullmatch(r"hotel-analytics-\d{3}", task.id)
        assert task.analytics is not None and task.analytics.gold_sql.lstrip().upper().startswith("SELECT")
        assert not task.gold_actions and not task.communicate
        assert "?" in task.user.script[0]


def test_benchmark_analytics_questions_name_no_entity() -> None:
    """Their IDs would be withheld from generation; names (hotels, cities, companies) are used instead."""
    for task in ANALYTICS:
        if task.split == "test":
            assert not list(entity_ids(task.model_dump(mode="json"))), task.id


# -- the policy encoding agrees with the benchmark authors -----------------------------------------------

SEED_TIERS = {hotel_id: tier for hotel_id, _, _, tier in HOTELS}


def _rows(task: Task, table: str, key: str) -> dict[str, dict[str, Any]]:
    return {r[key]: r for r in task.initial_patch.get(table, [])}


def _tier(task: Task, room_type_id: str) -> HotelTier:
    patched = _rows(task, "room_types", "room_type_id").get(room_type_id)
    hotel_id = patched["hotel_id"] if patched else "H-" + room_type_id.split("-")[1]
    hotel = _rows(task, "hotels", "hotel_id").get(hotel_id)
    return cast(HotelTier, hotel["tier"]) if hotel else SEED_TIERS[hotel_id]


CHANGES = ("cancel_booking", "change_booking_dates", "change_room_type", "create_approval_request")


def _decisions(task: Task) -> list[tuple[Any, Any]]:
    """(what the task's gold says, what the families' rules say) for each policy decision in the gold."""
    bookings = _rows(task, "bookings", "booking_id")
    guests = _rows(task, "guests", "guest_id")
    tickets = _rows(task, "support_tickets", "ticket_id")
    # A ticket opened in the gold gets the first generated ticket ID.
    opened = [a.arguments for a in task.gold_actions if a.name == "open_support_ticket"][:1]
    out = []
    for action in task.gold_actions:
        args = action.arguments
        bk = bookings.get(args.get("booking_id", ""))
        if action.name == "award_goodwill_points":
            ticket = tickets.get(args["ticket_id"]) or (opened[0] if args["ticket_id"] == "TK-90001" else {})
            booking = bookings[ticket["booking_id"]]
            tier = guests[booking["guest_id"]]["loyalty_tier"]
            out.append((args["points"], goodwill_points(ticket["category"], tier)))
        if bk is None:
            continue
        tier, loyalty = _tier(task, bk["room_type_id"]), guests[bk["guest_id"]]["loyalty_tier"]
        days = days_before(date.fromisoformat(bk["check_in"]))
        if action.name == "cancel_booking":
            out.append((args["refund_percent"], refund_percent(tier, days, loyalty, bk["rate_plan"])))
        elif action.name in ("change_booking_dates", "change_room_type"):
            out.append((args["charge_change_fee"], change_fee_applies(tier, days, loyalty)))
        elif action.name == "add_booking_extra":
            out.append((args["complimentary"], extra_is_complimentary(args["extra"], loyalty)))
        if bk.get("corporate_account_id") and action.name in CHANGES:
            large = bk["room_total_cents"] >= APPROVAL_THRESHOLD_CENTS
            out.append((action.name == "create_approval_request", large))
    return out


def test_the_rules_families_apply_agree_with_every_hand_written_decision() -> None:
    decisions = [(t.id, d) for t in domain.tasks for d in _decisions(t)]
    assert len(decisions) >= 20
    assert [(task_id, gold, ours) for task_id, (gold, ours) in decisions if gold != ours] == []


@pytest.mark.parametrize(
    ("hotel_tier", "days", "loyalty", "plan", "percent"),
    [
        ("budget", 0, "blue", "flexible", 0),
        ("budget", 1, "silver", "flexible", 100),
        ("standard", 0, "blue", "flexible", 50),
        ("standard", 1, "gold", "flexible", 100),
        ("premium", 0, "gold", "flexible", 0),
        ("premium", 2, "silver", "flexible", 50),
        ("luxury", 1, "platinum", "flexible", 100),
        ("luxury", 6, "blue", "flexible", 50),
        ("luxury", 7, "blue", "flexible", 100),
        ("luxury", 30, "platinum", "non_refundable", 0),
    ],
)
def test_refund_table(
    hotel_tier: HotelTier, days: int, loyalty: LoyaltyTier, plan: RatePlan, percent: int
) -> None:
    assert refund_percent(hotel_tier, days, loyalty, plan) == percent
