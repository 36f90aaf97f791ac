"""GRPO's unit of data: a group of G episodes of one task, with the recipe's rules for useless groups.

GRPO scores each episode against the other episodes of its task: the advantage of an episode is its reward
minus the group's mean, divided by the group's spread. A group whose G rewards are all equal (all solved, or
all failed) has zero advantage everywhere, so it teaches nothing while its tokens still dilute a token-mean
loss. The recipe therefore *replaces* such a group: the slot is refilled with a group of another task of the
pool (at most `replacements` draws per slot); a slot left without an informative group is *dropped* (its
tokens are masked out of the loss). Both are counted.

Backend failures (the server, the policy, a timeout) say nothing about the agent: an episode that ends in
`backend_error` is rerun (up to `retries` times) and never scored as a failure. A group that still cannot
complete its G episodes is abandoned like an uninformative one, so a backend error never reaches the loss.

This module knows nothing of any training framework: `collect_groups` returns rollouts with their exact
token ids, loss masks and rewards, and a breakdown of where the time went.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence

from pydantic import Field

from shared.client import AsyncGroundstateClient
from shared.strict_model import StrictModel
from trainer.curriculum import GroupOutcome
from trainer.policies import Policy
from trainer.retry import EpisodeLimits, RetrySettings, run_with_retries
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutResult

__all__ = ["EpisodeGroup", "GroupSettings", "StepGroups", "StepTiming", "collect_groups", "episode_timing"]


class GroupSettings(EpisodeLimits, RetrySettings):
    """How the groups of one training step are collected (episode limits and retries inherited)."""

    episodes: int = Field(default=8, ge=2)
    """Episodes per task (G); GRPO needs at least 2 to compare."""
    replacements: int = Field(default=2, ge=0)
    """Other tasks tried, per slot, when a slot's group has zero reward variance or cannot complete."""
    concurrency: int = Field(default=1, ge=1)
    """Episodes running at once (a local model generates for one at a time; more overlaps server calls)."""


class StepTiming(StrictModel):
    """Seconds of episode time by part, summed over the step's episodes (retries and replacements included).

    With `concurrency` 1 the parts add up to the rollout phase's wall time; above 1 they overlap.
    """

    generation_s: float = 0.0
    """The policy producing turns (prefill and sampling)."""
    tools_s: float = 0.0
    """Tool calls on the server."""
    user_s: float = 0.0
    """The simulated user's replies."""
    scoring_s: float = 0.0
    """Scoring the episodes."""
    start_s: float = 0.0
    """Starting episodes (sandbox creation, first message)."""
    other_s: float = 0.0
    """The rest of the episodes' time (bookkeeping, waiting for the generation lock)."""

    @property
    def env_s(self) -> float:
        """Time in the environment: start, tools, user and scoring."""
        return self.start_s + self.tools_s + self.user_s + self.scoring_s

    def add(self, other: StepTiming) -> None:
        """Accumulate another breakdown into this one."""
        for name in StepTiming.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def episode_timing(result: RolloutResult) -> StepTiming:
    """Where one episode's time went, read from its event log."""
    parts = {"policy_turn": 0.0, "tool_call": 0.0, "user_message": 0.0, "scored": 0.0, "episode_started": 0.0}
    for event in result.events:
        if event.kind in parts:
            parts[event.kind] += float(event.data.get("latency_s", 0.0))
    timing = StepTiming(
        generation_s=parts["policy_turn"],
        tools_s=parts["tool_call"],
        user_s=parts["user_message"],
        scoring_s=parts["scored"],
        start_s=parts["episode_started"],
    )
    timing.other_s = max(0.0, result.latency_s - timing.generation_s - timing.env_s)
    return timing


class EpisodeGroup(StrictModel):
    """G episodes of one task."""

    task_id: str
    """The task played."""
    rollouts: list[RolloutResult] = Field(default_factory=list)
    """The scored episodes (G of them when the group is complete)."""
    backend_errors: int = 0
    """Episodes that ended in a backend error and were rerun (or abandoned): never counted as failures."""
    complete: bool = False
    """All G episodes were scored."""

    @property
    def rewards(self) -> list[int]:
        """The scored episodes' rewards."""
        return [r.reward or 0 for r in self.rollouts]

    @property
    def informative(self) -> bool:
        """Complete, and its rewards are not all equal (a nonzero GRPO advantage somewhere)."""
        return self.complete and len(set(self.rewards)) > 1


class StepGroups(StrictModel):
    """The groups of one step, one per slot, and what it took to get them."""

    groups: list[EpisodeGroup]
    """One group per slot, in slot order: informative, or the slot's last try (then it is dropped)."""
    replaced: int = 0
    """Slots whose first group was uninformative or incomplete and that were refilled from the pool."""
    uninformative: int = 0
    """Complete groups with zero reward variance (replaced or dropped), over all tries."""
    incomplete: int = 0
    """Groups abandoned because an episode kept failing with backend errors."""
    backend_errors: int = 0
    """Episodes that ended in a backend error (each rerun or abandoned; never a failure)."""
    episodes: int = 0
    """Episodes scored, over all tries."""
    successes: int = 0
    """Scored episodes with reward 1, over all tries."""
    tries: list[GroupOutcome] = Field(default_factory=list)
    """Every group played, replaced ones included, with its rewards (what a curriculum learns from)."""
    timing: StepTiming = Field(default_factory=StepTiming)
    """Episode time by part."""
    wall_s: float = 0.0
    """Wall-clock seconds of the whole collection."""

    @property
    def dropped(self) -> int:
        """Slots left without an informative group: masked out of the loss."""
        return sum(not g.informative for g in self.groups)

    @property
    def reward_mean(self) -> float | None:
        """Mean reward of every scored episode of the step (the policy's success rate as sampled)."""
        return self.successes / self.episodes if self.episodes else None


async def collect_groups(
    client: AsyncGroundstateClient,
    policy: Policy,
    slots: Sequence[str],
    pool: Sequence[str],
    settings: GroupSettings,
    rng: random.Random,
) -> StepGroups:
    """Run one group per slot, replacing uninformative or failed groups with other tasks of the pool.

    Args:
        client: The server client.
        policy: The policy (one instance for every episode).
        slots: The step's task ids, one per group.
        pool: Every task id that may replace a slot's task (those in `slots` are not drawn).
        settings: G, replacements, retries and episode limits.
        rng: Draws replacement tasks (seeded by the caller, so a run is reproducible).

    Returns:
        The groups and the step's counters.

    Raises:
        ApiError: The server rejected a request for a reason retrying cannot fix (unknown task, bad key).
    """
    started = time.monotonic()
    spare = [t for t in pool if t not in set(slots)]
    rng.shuffle(spare)
    step = StepGroups(groups=[])
    gate = asyncio.Semaphore(settings.concurrency)

    async def fill(task_id: str) -> EpisodeGroup:
        group = await _run_group(client, policy, task_id, settings, gate, step)
        tries = 0
        while not group.informative and tries < settings.replacements and spare:
            if tries == 0:
                step.replaced += 1
            tries += 1
            group = await _run_group(client, policy, spare.pop(), settings, gate, step)
        return group

    step.groups = list(await asyncio.gather(*(fill(t) for t in slots)))
    step.wall_s = time.monotonic() - started
    return step


async def _run_group(
    client: AsyncGroundstateClient,
    policy: Policy,
    task_id: str,
    settings: GroupSettings,
    gate: asyncio.Semaphore,
    step: StepGroups,
) -> EpisodeGroup:
    group = EpisodeGroup(task_id=task_id)
    results = await asyncio.gather(
        *(_episode(client, policy, task_id, settings, gate, step, seed) for seed in range(settings.episodes))
    )
    group.rollouts = [r for r, _ in results if r is not None]
    group.backend_errors = sum(errors for _, errors in results)
    group.complete = len(group.rollouts) == settings.episodes
    step.tries.append(GroupOutcome(task_id=task_id, rewards=group.rewards))
    if not group.complete:
        step.incomplete += 1
    elif not group.informative:
        step.uninformative += 1
    return group


async def _episode(
    client: AsyncGroundstateClient,
    policy: Policy,
    task_id: str,
    settings: GroupSettings,
    gate: asyncio.Semaphore,
    step: StepGroups,
    seed: int,
) -> tuple[RolloutResult | None, int]:
    """One scored episode (None when every attempt failed) and the backend errors it took."""
    config = settings.rollout_config(seed=seed)

    async def attempt(_: int) -> RolloutResult:
        async with gate:
            result = await run_rollout(client, policy, task_id, config)
        step.timing.add(episode_timing(result))
        return result

    def failed(_: int, __: RolloutResult) -> None:
        step.backend_errors += 1

    result, number = await run_with_retries(settings, attempt, failed)
    if result.status != "scored":
        return None, number + 1
    step.episodes += 1
    step.successes += result.reward or 0
    return result, number
