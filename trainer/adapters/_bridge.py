"""Drive the one rollout state machine (`trainer.rollout`) from a framework that pushes the model's turns.

Every framework here owns the loop that calls the model (SkyRL-Gym's `step(action)`, verifiers'
`env_response`, NeMo Gym's tool routes), while our rollout pulls turns from a `Policy`. The bridge turns one
into the other without a second episode loop: `run_rollout` runs as a task with a `_PushedPolicy`, whose
`respond` hands the conversation out and waits for the framework's next turn. So tool calls, messages to the
simulated user, the turn limit, the time budget, scoring and the backend-error contract are the rollout's own.

    framework                 EpisodeBridge                    run_rollout (the state machine)
    begin()          ->  start the task, wait for an ask  <-  START, POLICY asks respond(messages, tools)
    push(turn)       ->  answer the ask, wait again       <-  TOOLS / USER, POLICY asks again ... | SCORE
                     <-  BridgeStep(new messages) or BridgeStep(done, result)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from shared.client import AsyncGroundstateClient
from shared.models import EpisodeStarted
from trainer.policies.base import Message, Policy, Turn
from trainer.rollout import run_rollout
from trainer.rollout_models import RolloutConfig, RolloutResult

__all__ = ["BridgeStep", "EpisodeBridge"]


@dataclass
class _Ask:
    """One `respond` call waiting for the framework's turn."""

    messages: list[Message]
    tools: list[dict[str, Any]]
    answer: asyncio.Future[Turn] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class _PushedPolicy(Policy):
    """A policy whose turns come from outside: each `respond` is queued as an `_Ask` and awaits its answer."""

    name = "pushed"

    def __init__(self) -> None:
        self.asks: asyncio.Queue[_Ask] = asyncio.Queue()
        self.episode_id: str | None = None

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        self.episode_id = episode.episode_id
        return self

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        ask = _Ask(messages, tools)
        await self.asks.put(ask)
        return await ask.answer


@dataclass
class BridgeStep:
    """What the episode gives back after a turn: the messages the model reads next, or the end."""

    messages: list[Message]
    """Messages appended since the model's last turn (tool results, the user's reply); the whole opening
    conversation (system prompt, first user message) on `begin`."""
    tools: list[dict[str, Any]]
    """The episode's tools (OpenAI format, with our `kind` key)."""
    result: RolloutResult | None = None
    """The finished rollout (`scored` with a reward, or `backend_error` with none); null while running."""

    @property
    def done(self) -> bool:
        """The episode has ended: scored or failed."""
        return self.result is not None


class EpisodeBridge:
    """One episode of `task_id`, played by turns pushed from outside; create and use it on one event loop."""

    def __init__(
        self,
        client: AsyncGroundstateClient,
        task_id: str,
        config: RolloutConfig | None = None,
        name: str = "pushed",
    ) -> None:
        self.policy = _PushedPolicy()
        self.policy.name = name
        self.client, self.task_id, self.config = client, task_id, config or RolloutConfig()
        self._task: asyncio.Task[RolloutResult] | None = None
        self._ask: _Ask | None = None
        self._seen = 0

    @property
    def episode_id(self) -> str | None:
        """The server's id of the episode, once it started."""
        return self.policy.episode_id

    @property
    def messages(self) -> list[Message]:
        """The whole conversation as the model last saw it."""
        return list(self._ask.messages) if self._ask is not None else []

    async def begin(self) -> BridgeStep:
        """Start the episode; returns the opening conversation (or the end, if starting failed).

        Raises:
            ApiError: The server refused the episode for a reason retrying cannot fix (unknown task).
        """
        if self._task is not None:
            raise RuntimeError("the episode has already begun")
        self._task = asyncio.create_task(run_rollout(self.client, self.policy, self.task_id, self.config))
        return await self._next()

    async def push(self, turn: Turn) -> BridgeStep:
        """Play the model's `turn`; returns what the model reads next, or the end of the episode."""
        if self._ask is None or self._ask.answer.done():
            raise RuntimeError("no turn is awaited: begin() first, and push no turn after the end")
        self._ask.answer.set_result(turn)
        return await self._next()

    async def cancel(self) -> None:
        """Abandon a running episode (the framework stopped early); the rollout disposes of its sandbox."""
        if self._task is None or self._task.done():
            return
        if self._ask is not None and not self._ask.answer.done():
            self._ask.answer.set_result(Turn(stop=True))  # ends the conversation; the rollout scores it
        await self._task

    async def _next(self) -> BridgeStep:
        assert self._task is not None
        asked = asyncio.ensure_future(self.policy.asks.get())
        await asyncio.wait({asked, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not asked.done():
            asked.cancel()
            result = self._task.result()  # raises the rollout's configuration errors (ApiError 4xx)
            return BridgeStep(messages=self._since_last(result.messages), tools=self._tools(), result=result)
        self._ask = asked.result()
        return BridgeStep(messages=self._since_last(self._ask.messages), tools=self._ask.tools)

    def _since_last(self, messages: list[Message]) -> list[Message]:
        """The messages after the model's own last turn (which the framework already holds)."""
        start = self._seen + 1 if self._seen else 0
        self._seen = len(messages)
        return list(messages[start:])

    def _tools(self) -> list[dict[str, Any]]:
        return self._ask.tools if self._ask is not None else []
