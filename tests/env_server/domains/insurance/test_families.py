"""Insurance scenario families and analytics tasks: valid, reproducible tasks on entities of their own.

The domain with its families is built here with `dataclasses.replace`, so these tests do not depend on the
package exporting the families yet. Draws use the generator's own context (seeded RNG, fresh IDs, seed rows
without benchmark entities) and its validation, exactly as `groundstate tasks generate` runs them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from env_server.analytics.answers import answer_matches
from env_server.domain import Domain, ScenarioFamily, ScenarioUnavailable, dollars_and_cents
from env_server.domain._family import entity_ids
from env_server.domains.insurance import domain as base_domain
from env_server.domains.insurance.families import FAMILIES
from env_server.scoring.scorer import Scorer
from shared.models import ToolCallSpec
from shared.tasks import Task
from tests.domain_families import assert_valid, family_context, generator_state

DOMAIN: Domain = dataclasses.replace(base_domain, families=FAMILIES)
FAMILY = {f.name: f for f in FAMILIES}
SEEDS = (11, 29, 47)


def _scorer() -> Scorer:
    """The generator's scorer (the sandboxes generated tasks are validated on)."""
    return generator_state(DOMAIN).scorer


def _draw(family: ScenarioFamily, seed: int, index: int = 0) -> Task:
    return family.build(family_context(DOMAIN, family, seed, index))


def _validate(task: Task) -> None:
    assert_valid(task, DOMAIN, _scorer())


# --- the catalogue -------------------------------------------------------------------------------------


def test_families_cover_the_policy_rules() -> None:
    assert len(FAMILIES) >= 8 and len(FAMILY) == len(FAMILIES)
    assert all(f.covers for f in FAMILIES)
    covered = {rule for f in FAMILIES for rule in f.covers}
    for rule in ("1.2", "1.4", "2.2", "4.1", "6.2", "7.1", "8.1", "10.2", "11.1"):
        assert rule in covered, rule
    assert sum(f.kind == "analytics" for f in FAMILIES) >= 1
    assert sum(f.kind == "action" for f in FAMILIES) >= 8


def test_analytics_tasks_split_and_shape() -> None:
    analytics = [t for t in base_domain.tasks if t.kind == "analytics"]
    splits = Counter(t.split for t in analytics)
    assert splits["test"] >= 14 and splits["train"] >= 8
    for task in analytics:
        assert task.id.startswith("insurance-analytics-")
        assert task.analytics is not None and task.analytics.gold_sql.lstrip().upper().startswith("SELECT")
        assert not task.gold_actions and not task.wrong_actions
        assert task.description and task.difficulty_tags and "?" in task.user.script[0]


@pytest.mark.parametrize(
    "task_id", sorted(t.id for t in base_domain.tasks if t.kind == "analytics"), ids=lambda i: i[-3:]
)
def test_analytics_task_validates(task_id: str) -> None:
    task = next(t for t in base_domain.tasks if t.id == task_id)
    _validate(task)


# --- generated tasks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_family_tasks_validate_and_avoid_benchmark_entities(name: str) -> None:
    family, benchmark = FAMILY[name], generator_state(DOMAIN).benchmark_ids
    for seed in SEEDS:
        task = _draw(family, seed)
        assert task.split == "train" and task.kind == family.kind
        assert task.id == f"insurance-gen-{name}-000000"
        mentioned = set(entity_ids(task.model_dump(mode="json")))
        assert mentioned and not mentioned & benchmark
        _validate(task)


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_families_are_reproducible_per_seed(name: str) -> None:
    family = FAMILY[name]
    assert _draw(family, 5, 3) == _draw(family, 5, 3)
    assert _draw(family, 5, 3) != _draw(family, 6, 3)


def test_families_rarely_give_up_and_branch_between_doing_and_refusing() -> None:
    unavailable, refusals = 0, Counter[str]()
    draws = 24
    for family in FAMILIES:
        for i in range(draws):
            try:
                task = _draw(family, 100, i)
            except ScenarioUnavailable:
                unavailable += 1
                continue
            refusals[family.name] += bool(task.wrong_actions)
    assert unavailable <= 0.05 * draws * len(FAMILIES)
    mixed = ("instalment-count", "change-by-status", "exclusion-by-state", "deductible-change")
    for name in (*mixed, "reinstate-lapsed", "identity-then-change", "vehicle-rules"):
        assert 0 < refusals[name] < draws, name
    assert refusals["claim-not-fileable"] == draws  # every draw is a loss rule 7 keeps out
    assert refusals["claim-decision"] == refusals["vehicle-swap"] == 0


def _final_outputs(task: Task) -> list[Any]:
    """The outputs of the gold replay's calls, in order (asserting none was refused)."""
    scorer = _scorer()
    calls = [ToolCallSpec(name=a.name, arguments=a.arguments) for a in task.gold_actions]
    results, _ = scorer.replay(task, DOMAIN, calls)
    assert all(r.error is None for r in results), [r.error for r in results]
    return [r.output for r in results]


def test_stated_figures_match_what_the_tools_compute() -> None:
    """The premium, payout and instalment the agent must state are the ones the gold replay produces."""
    checked = Counter[str]()
    for i in range(16):
        for name in ("deductible-change", "claim-decision", "instalment-count"):
            task = _draw(FAMILY[name], 7, i)
            if not task.communicate or task.wrong_actions or task.communicate == ["adjuster"]:
                continue
            last = _final_outputs(task)[-1]
            stated = {
                "deductible-change": lambda o: o["monthly_premium_cents"],
                "claim-decision": lambda o: o["payout_cents"],
                "instalment-count": lambda o: o["instalment_plans"][-1]["instalment_cents"],
            }[name](last)
            assert task.communicate == [dollars_and_cents(stated)], (task.id, task.communicate, stated)
            checked[name] += 1
    assert min(checked.values()) >= 2 and len(checked) == 3


def test_analytics_families_ask_about_their_own_fresh_rows() -> None:
    scorer = _scorer()
    for family in (f for f in FAMILIES if f.kind == "analytics"):
        for i in range(4):
            task = _draw(family, 3, i)
            assert task.analytics is not None and task.initial_patch
            with_rows = scorer.gold_rows(task, DOMAIN)
            bare = task.model_copy(update={"id": f"{task.id}-bare", "initial_patch": {}})
            without = scorer.gold_rows(bare, DOMAIN)
            matched, _ = answer_matches(without, with_rows, task.analytics.tolerance)
            assert with_rows and not matched, task.user.script[0]
