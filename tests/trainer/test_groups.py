"""GRPO groups against a real server: informative groups kept, zero-variance ones replaced or dropped,
backend errors rerun and kept out of the training batch."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient
from shared.models import EpisodeStarted
from tests.live_server import serve
from tests.toy_domain import domain as toy_domain
from trainer.groups import GroupSettings, StepGroups, collect_groups
from trainer.policies import Message, Policy, PolicyError, Turn
from trainer.policies.scripted import ReplayPolicy
from trainer.train_local import trl_batch

TRANSFER = "toybank-transfer-001"  # the replay policy solves it
FROZEN = "toybank-refuse-frozen-002"
ANALYTICS = "toybank-analytics-005"
JUDGE = "toybank-judge-003"  # needs a judge endpoint the test server lacks: every episode is a backend error


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


class Silent(Policy):
    """Ends every episode at once without doing anything (reward 0 on an action task)."""

    name = "silent"

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        return Turn(stop=True)


class Alternating(Policy):
    """Plays the gold actions in every other episode and nothing in the others: rewards 1, 0, 1, 0..."""

    name = "alternating"

    def __init__(self) -> None:
        self.replay, self.started = ReplayPolicy(), 0

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        self.started += 1
        return await self.replay.for_episode(episode, client) if self.started % 2 else Silent()

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        raise AssertionError("always bound first")


class FailsFirst(Policy):
    """The replay policy, but its first episode's endpoint fails (a backend error, then a clean rerun)."""

    name = "fails-first"

    def __init__(self) -> None:
        self.replay, self.failed = ReplayPolicy(), False

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        if not self.failed:
            self.failed = True
            raise PolicyError("endpoint down")
        return await self.replay.for_episode(episode, client)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        raise AssertionError("always bound first")


def collect(server: str, policy: Policy, slots: list[str], pool: list[str], **settings: Any) -> StepGroups:
    async def run() -> StepGroups:
        client = AsyncGroundstateClient(server)
        try:
            return await collect_groups(
                client, policy, slots, pool, GroupSettings(**settings), random.Random(0)
            )
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_a_group_with_both_outcomes_is_kept(server: str) -> None:
    step = collect(server, Alternating(), [TRANSFER], [TRANSFER, FROZEN], episodes=4)
    (group,) = step.groups
    assert group.task_id == TRANSFER and group.rewards == [1, 0, 1, 0] and group.informative
    assert (step.replaced, step.dropped, step.uninformative, step.episodes, step.successes) == (0, 0, 0, 4, 2)
    assert step.reward_mean == 0.5


def test_zero_variance_groups_are_replaced_then_dropped_and_counted(server: str) -> None:
    step = collect(server, ReplayPolicy(), [TRANSFER], [TRANSFER, FROZEN, ANALYTICS], episodes=2)
    (group,) = step.groups
    assert not group.informative and group.rewards == [1, 1]
    assert group.task_id in {FROZEN, ANALYTICS}, "the slot was refilled from the pool"
    assert (step.replaced, step.uninformative, step.dropped, step.episodes) == (1, 3, 1, 6)
    batch = trl_batch(step, episodes=2, filler=7)
    assert batch["env_mask"] == [[0], [0]] and batch["episode_reward"] == [None, None]
    assert batch["completion_ids"] == [[7], [7]], "a dropped slot costs one filler token per row"


def test_backend_errors_are_rerun_and_never_reach_the_batch(server: str) -> None:
    step = collect(server, ReplayPolicy(), [JUDGE], [JUDGE], episodes=2, retries=1, replacements=0)
    (group,) = step.groups
    assert not group.complete and group.rollouts == [] and group.backend_errors == 4
    assert (step.backend_errors, step.incomplete, step.episodes, step.dropped) == (4, 1, 0, 1)
    batch = trl_batch(step, episodes=2, filler=0)
    assert batch["episode_reward"] == [None, None] and batch["env_mask"] == [[0], [0]]

    flaky = collect(server, FailsFirst(), [TRANSFER], [TRANSFER], episodes=2, retries=1, replacements=0)
    (group,) = flaky.groups
    assert group.complete and group.rewards == [1, 1] and group.backend_errors == 1
    assert (flaky.backend_errors, flaky.episodes, flaky.successes) == (1, 2, 2), "the error is not a failure"


def test_an_incomplete_group_is_replaced_by_a_pool_task(server: str) -> None:
    step = collect(server, Alternating(), [JUDGE], [JUDGE, TRANSFER], episodes=2, retries=0, replacements=1)
    (group,) = step.groups
    assert group.task_id == TRANSFER and group.informative
    # the gold replay speaks, so its rubric needs the missing judge (a backend error); the silent episode's
    # rubric fails unheard without one (reward 0): one error leaves the group incomplete all the same
    assert (step.replaced, step.incomplete, step.backend_errors, step.dropped) == (1, 1, 1, 0)
