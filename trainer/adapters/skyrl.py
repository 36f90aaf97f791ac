"""groundstate as a SkyRL-Gym text environment: one episode per trajectory, one `step` per model turn.

Register it (`register_skyrl_env()`, id `groundstate`) and SkyRL's generator makes it with
`skyrl_gym.make("groundstate", env_config=..., extras={"task_id": ...})`. The mapping:

    init(prompt)    starts the episode; returns the conversation the model reads (domain policy with the tools
                    rendered in the tool format, the user's first message); the dataset prompt is ignored
    step(action)    the model's raw text is parsed for tool calls (Hermes by default) and played by the one
                    rollout state machine; observations are the tool results / the user's reply, rendered
                    as the format renders them; reward 0.0 on every turn but the last, where it is the
                    server's reward (1.0 or 0.0)
    backend_error   (server down, time budget): `step` raises `EpisodeBackendError` — SkyRL-Gym has no
                    masked sample, and a 0 would teach the policy that the infrastructure's failure was its
                    own; the trainer's error handling drops or retries the trajectory
    metadata        `env_id` (`domain@version`), `task_id`, `episode_id`, the score's checks and status

Everything runs through `trainer.rollout` via `EpisodeBridge`; nothing here calls a tool or scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field
from skyrl_gym import register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from shared.client import DEFAULT_SERVER_URL, AsyncGroundstateClient
from shared.models import UserKind
from shared.strict_model import StrictModel
from trainer.adapters._bridge import BridgeStep, EpisodeBridge
from trainer.adapters._loop import run_sync
from trainer.adapters._pin import EnvironmentPin, parse_env_id, resolve_pin
from trainer.policies.base import Message, Turn, split_stop
from trainer.policies.tool_formats import FORMATS, ToolFormatName
from trainer.rollout_models import RolloutConfig, RolloutResult

__all__ = [
    "ENV_ID",
    "EpisodeBackendError",
    "GroundstateSkyRLConfig",
    "GroundstateTextEnv",
    "register_skyrl_env",
]

ENV_ID = "groundstate"
"""The id `register_skyrl_env` registers with SkyRL-Gym."""


class EpisodeBackendError(RuntimeError):
    """The episode failed on infrastructure (status `backend_error`): no reward, not the agent's fault."""

    def __init__(self, result: RolloutResult) -> None:
        super().__init__(f"groundstate episode {result.episode_id} of {result.task_id}: {result.error}")
        self.result = result


class GroundstateSkyRLConfig(StrictModel):
    """The environment's settings (SkyRL's `env_config`)."""

    server_url: str = DEFAULT_SERVER_URL
    """The groundstate server."""
    api_key: str | None = None
    """The server's API key, if it requires one."""
    env: str = Field(description="`domain` or `domain@version` (a pinned domain fingerprint).")
    """The environment: `domain` or `domain@version`; every episode's score is checked against the pin."""
    user: UserKind | None = None
    """The simulated user; the server's default if null."""
    max_turns: int = Field(default=30, ge=1)
    """Model turns per episode."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of an episode (past it: backend_error)."""
    tool_format: ToolFormatName = "hermes"
    """How the model writes tool calls and reads their results (`trainer.policies.tool_formats`)."""


class GroundstateTextEnv(BaseTextEnv):
    """One groundstate episode as a SkyRL-Gym `BaseTextEnv`."""

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        self.config = GroundstateSkyRLConfig.model_validate(dict(env_config or {}))
        extras = dict(extras or {})
        info = dict(extras.get("extra_info") or {})
        task_id = extras.get("task_id") or info.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise ValueError("extras.task_id (or extras.extra_info.task_id) must name a groundstate task")
        self.task_id = task_id
        self.domain, self.version = parse_env_id(self.config.env)
        if not task_id.startswith(f"{self.domain}-"):
            raise ValueError(f"task {task_id!r} is not a task of the environment's domain {self.domain!r}")
        self.max_turns = self.config.max_turns
        self.format = FORMATS["hermes" if self.config.tool_format == "auto" else self.config.tool_format]
        self.pin: EnvironmentPin | None = None
        self.result: RolloutResult | None = None
        self._client: AsyncGroundstateClient | None = None
        self._bridge: EpisodeBridge | None = None
        self._conversation: list[Message] = []
        self._tools: list[dict[str, Any]] = []

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Start the episode; returns the opening conversation (the dataset's `prompt` is not used)."""
        step = run_sync(self._begin())
        self._take(step)
        if step.result is not None:  # failed at the start: the server or the time budget
            self._finish(step.result)
        return self._rendered(self._conversation), self._metadata()

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Play the model's turn; the reward is 0.0 until the last step, which carries the server's reward."""
        if self._bridge is None or self.result is not None:
            raise RuntimeError("step() after the episode ended, or before init()")
        self.turns += 1
        text, stop = split_stop(action)
        content, calls = self.format.parse(text, self._tools)
        turn = Turn(content=content, tool_calls=calls, stop=stop)
        seen = len(self._rendered([*self._conversation, turn.message()]))
        step = run_sync(self._bridge.push(turn))
        self._conversation.append(turn.message())
        self._take(step)
        observations = self._rendered(self._conversation)[seen:]
        if step.result is None:
            return BaseTextEnvStepOutput(observations=observations, reward=0.0, done=False, metadata={})
        self._finish(step.result)
        assert self.result is not None and self.result.reward is not None
        return BaseTextEnvStepOutput(
            observations=[], reward=float(self.result.reward), done=True, metadata=self._metadata()
        )

    def close(self) -> None:
        """Abandon an unfinished episode and close the client."""
        run_sync(self._close())

    def get_metrics(self) -> dict[str, Any]:
        """The episode's outcome for SkyRL's metric aggregation."""
        if self.result is None:
            return {"turns": self.turns}
        return {"turns": self.turns, "tool_calls": self.result.tool_calls, "reward": self.result.reward or 0}

    async def _begin(self) -> BridgeStep:
        self._client = AsyncGroundstateClient(self.config.server_url, api_key=self.config.api_key)
        self.pin = await resolve_pin(self._client, self.domain, self.task_id, self.version)
        config = RolloutConfig(
            max_turns=self.max_turns, timeout_s=self.config.timeout_s, user=self.config.user
        )
        self._bridge = EpisodeBridge(self._client, self.task_id, config, name="skyrl")
        return await self._bridge.begin()

    async def _close(self) -> None:
        if self._bridge is not None:
            await self._bridge.cancel()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _take(self, step: BridgeStep) -> None:
        self._conversation.extend(step.messages)
        self._tools = step.tools or self._tools

    def _finish(self, result: RolloutResult) -> None:
        self.result = result
        run_sync(self._close())
        if result.status == "backend_error":
            raise EpisodeBackendError(result)
        if self.pin is not None and result.score is not None:
            self.pin.check(result.score)

    def _rendered(self, messages: list[Message]) -> list[dict[str, str]]:
        return [
            {"role": m["role"], "content": m["content"]}
            for m in self.format.text_messages(messages, self._tools)
        ]

    def _metadata(self) -> dict[str, Any]:
        score = self.result.score if self.result is not None else None
        return {
            "env_id": self.pin.env_id if self.pin is not None else self.config.env,
            "scorer_version": self.pin.scorer_version if self.pin is not None else None,
            "task_id": self.task_id,
            "episode_id": self._bridge.episode_id if self._bridge is not None else None,
            "status": self.result.status if self.result is not None else None,
            "checks": [c.model_dump() for c in score.checks] if score is not None else [],
        }


def register_skyrl_env(env_id: str = ENV_ID) -> None:
    """Register the environment with SkyRL-Gym under `env_id` (idempotent)."""
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        register(id=env_id, entry_point="trainer.adapters.skyrl:GroundstateTextEnv")
