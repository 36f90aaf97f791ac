"""The retail domain as a whole: its seed, its task files and the trajectories they reference."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from env_server.domains.retail import domain
from env_server.sandbox.template import apply_patch
from shared.tasks import GoldAction, Task
from tests.domain_sandbox import build_database, engine_over, fresh_engine, replay_actions

#: The action tasks (analytics tasks have their own checks in the analytics tests).
ACTION_TASKS = [t for t in domain.tasks if t.kind == "action"]

TASKS = {task.id: task for task in ACTION_TASKS}


def _seeded_engine() -> Engine:
    return engine_over(build_database(domain))


def _dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {
            t.name: [tuple(r) for r in conn.execute(select(t).order_by(*t.primary_key.columns))]
            for t in domain.metadata.sorted_tables
        }


@pytest.fixture(scope="module")
def seeded() -> Iterator[dict[str, list[tuple[Any, ...]]]]:
    yield _dump(_seeded_engine())


def test_seed_is_deterministic_and_has_over_a_thousand_rows(seeded: dict[str, list[tuple[Any, ...]]]) -> None:
    assert _dump(_seeded_engine()) == seeded
    assert sum(len(rows) for rows in seeded.values()) >= 1000
    assert len([t for t, rows in seeded.items() if rows]) >= 8


def test_a_different_rng_seed_gives_a_different_history(seeded: dict[str, list[tuple[Any, ...]]]) -> None:
    engine = create_engine("sqlite://")
    domain.metadata.create_all(engine)
    with Session(engine) as session:
        domain.seed(session, random.Random(domain.seed_value + 1))
        session.commit()
    other = _dump(engine)
    assert other["products"] == seeded["products"]
    assert other["orders"] != seeded["orders"]


def test_seeded_ids_stay_below_the_task_and_generated_ranges(
    seeded: dict[str, list[tuple[Any, ...]]],
) -> None:
    keyed_by_code = {"membership_tiers", "promotions"}
    for table, rows in seeded.items():
        for row in rows if table not in keyed_by_code else []:
            number = re.search(r"-(\d+)(?:-[A-Z]+)?$", str(row[0]))
            assert number is not None, (table, row[0])
            assert int(number.group(1)) < 70000, (table, row[0])


def test_identity_verifications_are_excluded_from_the_state_comparison() -> None:
    assert domain.volatile_columns["identity_verifications"] == frozenset({"*"})


def test_task_catalogue_meets_the_split_and_kind_quotas() -> None:
    splits = Counter(t.split for t in TASKS.values())
    assert splits["test"] >= 25 and splits["train"] >= 15
    assert all(t.domain == "retail" and t.kind == "action" for t in TASKS.values())
    assert sum(bool(t.communicate) for t in TASKS.values()) >= 3
    assert sum(bool(t.rubric) for t in TASKS.values()) >= 2
    assert all(2 <= len(t.user.script) <= 5 for t in TASKS.values())


def _actions(task: Task) -> list[GoldAction]:
    return [*task.gold_actions, *task.wrong_actions]


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_task_actions_name_existing_tools_with_valid_arguments(task_id: str) -> None:
    for action in _actions(TASKS[task_id]):
        assert action.name in domain.tools_by_name, action.name
        domain.tools_by_name[action.name].validate(action.arguments)


def test_canary_is_a_valid_write() -> None:
    canary = domain.canary_action
    assert canary is not None
    tool = domain.tools_by_name[canary.name]
    assert tool.kind == "write"
    tool.validate(canary.arguments)


def _entities(task: Task) -> set[str]:
    return {row["id"] for table in ("customers", "orders") for row in task.initial_patch.get(table, [])}


def test_train_and_test_tasks_use_disjoint_customers_and_orders() -> None:
    by_split: dict[str, set[str]] = {"train": set(), "test": set()}
    for task in TASKS.values():
        entities = _entities(task)
        assert not entities & by_split[task.split], f"{task.id} reuses entities within its split"
        by_split[task.split] |= entities
    assert not by_split["train"] & by_split["test"]


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_task_actions_only_touch_the_tasks_own_customers_and_orders(task_id: str) -> None:
    task = TASKS[task_id]
    own = _entities(task)
    for action in _actions(task):
        for name in ("customer_id", "order_id"):
            if name in action.arguments:
                assert action.arguments[name] in own, (action.name, action.arguments[name])


def _replay(task: Task, actions: list[GoldAction]) -> list[str]:
    """Replay on a fresh copy of the seed plus the task's patch; return the refusals as "tool: message"."""
    engine = fresh_engine(domain)
    with engine.begin() as conn:
        apply_patch(conn, domain, task.initial_patch)
    with Session(engine) as session:
        return replay_actions(session, domain, actions)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_gold_and_wrong_trajectories_replay_without_refusals(task_id: str) -> None:
    task = TASKS[task_id]
    assert _replay(task, task.gold_actions) == []
    assert _replay(task, task.wrong_actions) == []


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_refusal_tasks_carry_a_wrong_trajectory(task_id: str) -> None:
    task = TASKS[task_id]
    gold_writes = [a for a in task.gold_actions if domain.tools_by_name[a.name].kind == "write"]
    if not gold_writes:
        assert task.wrong_actions, "a task whose gold changes nothing needs wrong_actions"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_tasks_that_change_nothing_check_what_the_agent_says(task_id: str) -> None:
    """A refusal leaves the state alone (a verification is not scored), so a do-nothing agent would score 1
    without a communicate item or a rubric question (with no agent message a rubric question fails)."""
    task = TASKS[task_id]
    changes = [
        a
        for a in task.gold_actions
        if domain.tools_by_name[a.name].kind == "write" and a.name != "verify_customer_identity"
    ]
    if not changes:
        assert task.communicate or task.rubric, "a do-nothing agent would score 1"


def test_package_exports_only_the_domain() -> None:
    import env_server.domains.retail as retail
    import env_server.domains.retail.tools as tools

    assert retail.__all__ == ["domain"] and retail.domain is domain
    assert tools.__all__ == ["TOOLS"] and list(tools.TOOLS) == list(domain.tools)


def test_every_tool_argument_is_described_for_the_model() -> None:
    for tool in domain.tools:
        schema = tool.openai_schema()["function"]
        assert schema["description"], tool.name
        for name, prop in schema["parameters"]["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
