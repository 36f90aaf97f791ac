"""Every shipped domain's tasks against the checks that need no sandbox (fast; `make validate` runs them all).

A domain merged after the validity checks were written (the starter curriculum) once reached main with
scripts that ran out at the agent's report; pytest did not notice because only `tasks validate` ran the
script checks. These run in the default suite.
"""

from __future__ import annotations

import pytest

from env_server.domain.registry import DomainRegistry
from env_server.validation import communicate_items
from env_server.validation.script import script_check, script_replay
from shared.tasks import Task

REGISTRY = DomainRegistry.discover()
ACTION_TASKS = [t for t in REGISTRY.tasks() if t.kind != "analytics"]


def test_every_domain_ships_action_tasks() -> None:
    assert {d.name for d in REGISTRY.domains} <= {t.domain for t in ACTION_TASKS}


@pytest.mark.parametrize("task", ACTION_TASKS, ids=lambda t: t.id)
def test_a_policy_following_agent_can_finish_and_items_are_atomic(task: Task) -> None:
    domain = REGISTRY.domain(task.domain)
    for outcome in (script_check(task, domain), script_replay(task, domain), communicate_items(task)):
        assert outcome.passed, f"{outcome.name}: {outcome.detail}"
