"""The insurance domain as a whole: its seed, its task files and the trajectories they reference."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from env_server.domains.insurance import domain
from env_server.domains.insurance.models import Claim, Driver, Policy, Vehicle
from env_server.domains.insurance.seed import NO_EXCLUSION_STATES
from env_server.sandbox.template import apply_patch
from shared.tasks import GoldAction, Task
from tests.domain_sandbox import fresh_engine, replay_actions

#: The action tasks (analytics tasks have their own checks in the analytics tests).
ACTION_TASKS = [t for t in domain.tasks if t.kind == "action"]

TASKS = {task.id: task for task in ACTION_TASKS}
TODAY = domain.now.date()
CANARY_CUSTOMER = "CU-10160"


def _copy() -> Engine:
    return fresh_engine(domain)


def _dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every domain table's rows (volatile columns and tables left out), in key order."""
    dump = {}
    with engine.connect() as conn:
        for table in domain.metadata.sorted_tables:
            volatile = domain.volatile_columns.get(table.name, frozenset())
            if "*" in volatile:
                continue
            columns = [c for c in table.columns if c.name not in volatile]
            rows = conn.execute(select(*columns).order_by(*table.primary_key.columns))
            dump[table.name] = [tuple(r) for r in rows]
    return dump


def _replay(task: Task, actions: Sequence[GoldAction]) -> tuple[bool, list[str]]:
    """Replay `actions` on the task's initial state: (non-volatile state changed, ToolError messages)."""
    engine = _copy()
    with engine.begin() as conn:
        apply_patch(conn, domain, task.initial_patch)
    before = _dump(engine)
    with Session(engine) as session:
        errors = replay_actions(session, domain, actions)
    return _dump(engine) != before, errors


# --- seed -----------------------------------------------------------------------------------------------


def test_seed_is_deterministic_with_over_a_thousand_rows_in_ten_tables() -> None:
    seeded = _dump(_copy())
    assert _dump(fresh_engine(domain)) == seeded
    assert sum(len(rows) for rows in seeded.values()) >= 1000
    assert len([t for t, rows in seeded.items() if rows]) >= 9  # identity_verifications starts empty


def test_a_different_rng_seed_gives_a_different_book() -> None:
    other = _dump(fresh_engine(domain, domain.seed_value + 1))
    assert other != _dump(_copy())


def test_seed_follows_the_policy() -> None:
    with Session(_copy()) as session:
        for policy in session.scalars(select(Policy)):
            active = session.scalars(
                select(Vehicle.monthly_premium_cents).where(
                    Vehicle.policy_id == policy.policy_id, Vehicle.status == "active"
                )
            ).all()
            assert active and policy.monthly_premium_cents == sum(active), policy.policy_id
            assert policy.term_start <= TODAY
        excluded = session.scalars(
            select(Policy.state)
            .join(Driver, Driver.policy_id == Policy.policy_id)
            .where(Driver.status == "excluded")
        ).all()
        assert excluded and not set(excluded) & NO_EXCLUSION_STATES
        for claim in session.scalars(select(Claim)):
            assert claim.incident_date <= claim.reported_on <= TODAY, claim.claim_id
            assert (
                claim.status != "approved"
                or claim.payout_cents == claim.estimated_damage_cents - claim.deductible_cents
            )


# --- tasks ----------------------------------------------------------------------------------------------


def test_tasks_load_with_enough_of_each_kind() -> None:
    splits = Counter(t.split for t in ACTION_TASKS)
    assert splits["test"] >= 25 and splits["train"] >= 15
    assert all(
        t.domain == "insurance" and t.id.startswith("insurance-") and t.kind == "action" for t in ACTION_TASKS
    )
    assert sum(bool(t.communicate) for t in ACTION_TASKS) >= 3
    assert sum(bool(t.rubric) for t in ACTION_TASKS) >= 2
    assert all(2 <= len(t.user.script) <= 5 for t in ACTION_TASKS)
    no_change = [t for t in ACTION_TASKS if not any(_changes_state(a) for a in t.gold_actions)]
    assert len(no_change) >= 10 and all(t.wrong_actions for t in no_change)
    # A do-nothing agent must not pass a refusal: each one asks for the decisive fact or a judged statement.
    assert all(t.communicate or t.rubric for t in no_change)


def _changes_state(action: GoldAction) -> bool:
    """A write whose effect the state check sees (identity checks are volatile)."""
    return domain.tools_by_name[action.name].kind == "write" and action.name != "verify_customer_identity"


def test_every_referenced_tool_exists_and_its_arguments_validate() -> None:
    assert domain.canary_action is not None
    actions = [domain.canary_action] + [a for t in ACTION_TASKS for a in (*t.gold_actions, *t.wrong_actions)]
    for action in actions:
        assert action.name in domain.tools_by_name, action.name
        domain.tools_by_name[action.name].validate(action.arguments)


def _entities(task: Task) -> set[str]:
    text = json.dumps(task.model_dump(mode="json"))
    return set(re.findall(r"\b(?:CU|POL)-\d{5}\b", text))


def test_train_and_test_tasks_use_different_customers_and_policies() -> None:
    train = set().union(*(_entities(t) for t in ACTION_TASKS if t.split == "train"))
    test = set().union(*(_entities(t) for t in ACTION_TASKS if t.split == "test"))
    assert train and test and not train & test
    assert CANARY_CUSTOMER not in train | test


def test_canary_is_a_valid_write_on_an_untouched_customer() -> None:
    assert domain.canary_action is not None
    assert domain.canary_action.arguments["customer_id"] == CANARY_CUSTOMER
    changed, errors = _replay(TASKS["insurance-cancel-001"], [domain.canary_action])
    assert changed and errors == []


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_gold_replays_cleanly_and_a_refusals_wrong_trajectory_changes_state(task_id: str) -> None:
    task = TASKS[task_id]
    changed, errors = _replay(task, task.gold_actions)
    assert errors == []
    assert changed == any(_changes_state(a) for a in task.gold_actions)
    if not changed:
        wrong_changed, _ = _replay(task, task.wrong_actions)
        assert wrong_changed


def test_initial_patches_name_real_rows_and_columns() -> None:
    tables = domain.metadata.tables
    for task in ACTION_TASKS:
        for name, rows in task.initial_patch.items():
            assert name in tables, (task.id, name)
            for row in rows:
                assert set(row) <= set(tables[name].c.keys()), (task.id, name)
                for value in row.values():
                    assert not isinstance(value, date), f"{task.id}: quote dates in YAML"
