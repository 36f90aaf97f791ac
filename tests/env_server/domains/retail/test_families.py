"""Retail scenario families and analytics tasks: generated tasks validate, stay off benchmark entities, vary
their outcome with the draw, and are reproducible; the analytics benchmark is large and portable."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from env_server.domain import ScenarioFamily
from env_server.domains.retail import domain
from env_server.domains.retail.families import FAMILIES
from env_server.domains.retail.families._policy import delay_credit
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

PER_FAMILY = 2
BUILDS = 40


@pytest.fixture(scope="module")
def draws() -> list[Draw]:
    """Two validated draws per family (each draw has its own RNG seed), from one generator run."""
    return list(generate(domain, n=PER_FAMILY * len(FAMILIES), seed=7, workers=1))


def _builds(family: ScenarioFamily, seed: int = 11, n: int = BUILDS) -> list[Task]:
    """`n` unvalidated builds of one family (unavailable draws skipped)."""
    return family_builds(domain, family, seed, n)


def test_at_least_eight_action_families_and_an_analytics_family_cover_the_policy() -> None:
    actions = [f for f in FAMILIES if f.kind == "action"]
    analytics = [f for f in FAMILIES if f.kind == "analytics"]
    assert len(actions) >= 8 and analytics
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
    covered = {rule for f in actions for rule in f.covers}
    assert {f"R{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15)} <= covered
    assert all(f.covers == ("analytics",) for f in analytics)
    assert list(domain.families) == FAMILIES


def test_every_family_yields_valid_train_tasks(draws: list[Draw]) -> None:
    kept = Counter(d.family for d in draws if d.task is not None)
    assert kept == Counter({f.name: PER_FAMILY for f in FAMILIES})
    kept_tasks(draws, domain)


def test_generated_tasks_revalidate_on_a_fresh_scorer(draws: list[Draw]) -> None:
    scorer = Scorer(SQLiteSandboxEngine(max_templates=8))
    for task in [d.task for d in draws if d.task is not None][: len(FAMILIES)]:
        assert_valid(task, domain, scorer)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_builds_never_mention_a_benchmark_entity(family: ScenarioFamily) -> None:
    benchmark = generator_state(domain).benchmark_ids
    tasks = _builds(family)
    assert len(tasks) >= BUILDS * 0.9
    for task in tasks:
        leaked = set(entity_ids(task.model_dump(mode="json"))) & benchmark
        assert not leaked, (task.id, sorted(leaked))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_builds_are_reproducible_per_seed(family: ScenarioFamily) -> None:
    assert _builds(family, seed=5, n=6) == _builds(family, seed=5, n=6)
    assert _builds(family, seed=5, n=6) != _builds(family, seed=6, n=6)


def test_a_generator_run_is_reproducible(draws: list[Draw]) -> None:
    again = list(generate(domain, n=len(FAMILIES), seed=7, workers=1))
    assert [d.task for d in again] == [d.task for d in draws[: len(again)]]


def _outcomes(family: str, classify: Callable[[Task], str]) -> Counter[str]:
    return Counter(classify(t) for t in _builds(next(f for f in FAMILIES if f.name == family)))


def _last_tool(task: Task) -> str:
    return task.gold_actions[-1].name if task.gold_actions else "none"


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("delay-compensation", {"issue_store_credit", "get_order"}),
        ("return-window", {"create_return", "get_order"}),
        ("return-approval", {"create_return", "create_approval_request"}),
        ("cancel-order", {"cancel_order", "get_order"}),
        ("address-change", {"update_order_address", "none"}),
        ("promo-code", {"apply_promotion", "get_order"}),
        ("price-protection", {"issue_refund", "get_order"}),
        ("lost-parcel", {"reship_order", "issue_refund", "create_approval_request"}),
        ("warranty-claim", {"file_warranty_claim", "check_warranty", "create_return"}),
    ],
)
def test_the_draw_decides_between_the_policy_outcomes(family: str, expected: set[str]) -> None:
    assert set(_outcomes(family, _last_tool)) == expected


def test_refusals_carry_a_wrong_trajectory_and_changes_do_not_need_one() -> None:
    for family in FAMILIES:
        for task in _builds(family, n=12) if family.kind == "action" else []:
            writes = [a for a in task.gold_actions if domain.tools_by_name[a.name].kind == "write"]
            assert writes or task.wrong_actions, task.id
            assert not writes or writes[0].name == "verify_customer_identity", task.id


def test_fee_and_resolution_follow_the_rules() -> None:
    returns = _builds(next(f for f in FAMILIES if f.name == "return-fee-by-tier"))
    waived = Counter(
        (t.initial_patch["customers"][0]["tier"], t.gold_actions[-1].arguments["reason"] == "changed_mind")
        for t in returns
        if not t.gold_actions[-1].arguments["waive_return_fee"]
    )
    assert waived and all(tier in ("basic", "silver") and changed for tier, changed in waived)
    for task in returns:
        paid_with = {p["order_id"]: p["payment_method_id"] for p in task.initial_patch["payments"]}
        args = task.gold_actions[-1].arguments
        assert args["refund_payment_method_id"] == paid_with[args["order_id"]]
    claims = [
        t
        for t in _builds(next(f for f in FAMILIES if f.name == "warranty-claim"), n=80)
        if _last_tool(t) == "file_warranty_claim"
    ]
    for task in claims:
        completed = sum(c["status"] == "completed" for c in task.initial_patch.get("warranty_claims", []))
        assert task.gold_actions[-1].arguments["resolution"] == (
            "replacement" if completed >= 2 else "repair"
        )
    assert delay_credit(44900) == 4490 and delay_credit(15099) == 1509 and delay_credit(219900) == 5000


def test_analytics_benchmark_size_and_portability() -> None:
    analytics = [t for t in domain.tasks if t.kind == "analytics"]
    splits = Counter(t.split for t in analytics)
    assert len(analytics) >= 22 and splits["test"] >= 14 and splits["train"] >= 8
    tables = domain.metadata.tables.keys()
    for task in analytics:
        assert task.id.startswith("retail-analytics-")
        assert_portable_analytics(task, tables)


def test_analytics_tasks_validate_with_non_empty_answers() -> None:
    scorer = Scorer(SQLiteSandboxEngine(max_templates=8))
    for task in [t for t in domain.tasks if t.kind == "analytics"]:
        assert_valid(task, domain, scorer)
        rows = scorer.gold_rows(task, domain)
        assert rows and any(cell not in (0, None) for row in rows for cell in row), task.id
