"""The hotel domain as a whole: its seed, its task files, the trajectories they reference, and its policy.

Task scoring itself is proven by `groundstate tasks validate`; here each task's gold and wrong trajectories
are replayed on a fresh copy of the seeded sandbox plus the task's patch, so a broken task fails fast.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.orm import Session

from env_server.domains.hotel import domain
from env_server.sandbox.template import apply_patch
from shared.tasks import GoldAction, Task
from tests.domain_sandbox import replay_actions

#: The action tasks (analytics tasks have their own checks in the analytics tests).
ACTION_TASKS = [t for t in domain.tasks if t.kind == "action"]

TASKS = {task.id: task for task in ACTION_TASKS}


def _writes(actions: list[GoldAction]) -> list[str]:
    return [a.name for a in actions if domain.tools_by_name[a.name].kind == "write"]


def _replay(
    engine: Engine, task: Task, actions: list[GoldAction]
) -> tuple[list[str], dict[str, list[tuple[Any, ...]]]]:
    """Replay `actions` on the task's initial state; return the refusals and the tables that changed."""
    with engine.begin() as connection:
        apply_patch(connection, domain, task.initial_patch)
    with Session(engine) as session:
        before = _all_rows(session)
        refusals = replay_actions(session, domain, actions)
        after = _all_rows(session)
    changed = {t: rows for t, rows in after.items() if rows != before[t] and t != "identity_verifications"}
    return refusals, changed


def _all_rows(session: Session) -> dict[str, list[tuple[Any, ...]]]:
    return {
        t.name: sorted(tuple(r) for r in session.execute(select(t)).all())
        for t in domain.metadata.sorted_tables
    }


def test_seed_is_deterministic_and_has_over_a_thousand_rows() -> None:
    dumps = []
    for _ in range(2):
        engine = create_engine("sqlite://")
        domain.metadata.create_all(engine)
        with Session(engine) as session:
            domain.seed(session, random.Random(domain.seed_value))
            session.commit()
            dumps.append(_all_rows(session))
    assert dumps[0] == dumps[1]
    assert sum(len(rows) for rows in dumps[0].values()) >= 1000
    assert len(domain.metadata.tables) >= 8
    assert dumps[0]["identity_verifications"] == []  # nobody starts verified


def test_every_task_file_loads_with_enough_tasks_per_split() -> None:
    splits = [t.split for t in ACTION_TASKS]
    assert len(ACTION_TASKS) >= 40
    assert splits.count("test") >= 25 and splits.count("train") >= 15
    assert len({t.id for t in ACTION_TASKS}) == len(ACTION_TASKS)
    assert all(t.domain == "hotel" and t.id.startswith("hotel-") for t in ACTION_TASKS)
    assert all(2 <= len(t.user.script) <= 5 for t in ACTION_TASKS)
    assert sum(bool(t.communicate) for t in ACTION_TASKS) >= 3
    assert sum(bool(t.rubric) for t in ACTION_TASKS) >= 2


def test_tasks_that_change_nothing_check_what_the_agent_says() -> None:
    """A refusal leaves the state alone, so a do-nothing agent would score 1 without a communicate item or
    a rubric question (with no agent message a rubric question fails)."""
    for task in ACTION_TASKS:
        if not _writes(task.gold_actions):
            assert task.communicate or task.rubric, f"{task.id}: a do-nothing agent would score 1"


def test_every_gold_and_wrong_action_names_a_tool_with_valid_arguments() -> None:
    actions = [a for t in ACTION_TASKS for a in [*t.gold_actions, *t.wrong_actions]]
    assert domain.canary_action is not None
    for action in [*actions, domain.canary_action]:
        tool = domain.tools_by_name[action.name]
        tool.validate(action.arguments)


def test_refusal_tasks_carry_a_wrong_trajectory() -> None:
    for task in ACTION_TASKS:
        if not _writes(task.gold_actions):
            assert task.wrong_actions, f"{task.id} changes nothing but has no wrong_actions"


def test_showcase_task_files_an_approval_and_leaves_booking_alone() -> None:
    task = next(t for t in ACTION_TASKS if t.id == "hotel-corp-modify-approval-001")
    assert task.split == "test"
    assert task.initial_patch["bookings"][0]["room_total_cents"] == 145_000
    assert _writes(task.gold_actions) == ["verify_guest_identity", "create_approval_request"]


def _entities(task_split: str) -> set[str]:
    """Guest, booking, account and payment-method IDs that the tasks of one split patch or act on."""
    keys = ("guest_id", "booking_id", "account_id", "payment_method_id", "requested_by_guest_id")
    found: set[str] = set()
    for task in ACTION_TASKS:
        if task.split != task_split:
            continue
        rows = [r for rows in task.initial_patch.values() for r in rows]
        rows += [a.arguments for a in [*task.gold_actions, *task.wrong_actions]]
        found |= {str(r[k]) for r in rows for k in keys if r.get(k) and not str(r[k]).endswith(("-90001",))}
    return found


def test_train_and_test_tasks_use_disjoint_guests_and_bookings() -> None:
    assert _entities("train") and _entities("test")
    assert not _entities("train") & _entities("test")


def test_policy_has_at_least_ten_numbered_rules() -> None:
    numbers = [int(n) for n in re.findall(r"^(\d+)\. \*\*", domain.policy, flags=re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 10


def test_tools_cover_reads_and_writes_with_prompt_docs() -> None:
    kinds = [t.kind for t in domain.tools]
    assert len(domain.tools) >= 15 and "read" in kinds and "write" in kinds
    for tool in domain.tools:
        schema = tool.openai_schema()["function"]
        assert schema["description"]
        assert all(p.get("description") for p in schema["parameters"].get("properties", {}).values()), (
            tool.name
        )


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_gold_replays_without_refusal_and_changes_state_unless_a_refusal(
    fresh_engine: Callable[[], Engine], task_id: str
) -> None:
    task = TASKS[task_id]
    refusals, changed = _replay(fresh_engine(), task, task.gold_actions)
    assert refusals == []
    assert bool(changed) == bool(_writes(task.gold_actions))


@pytest.mark.parametrize("task_id", sorted(t.id for t in ACTION_TASKS if t.wrong_actions))
def test_wrong_trajectory_is_accepted_by_the_tools_and_changes_state(
    fresh_engine: Callable[[], Engine], task_id: str
) -> None:
    refusals, changed = _replay(fresh_engine(), TASKS[task_id], TASKS[task_id].wrong_actions)
    assert refusals == []  # the policy, not the tool, must be what makes it wrong
    assert changed
