"""groundstate as a verifiers (0.4, `verifiers.v1`) taskset and environment.

verifiers resolves a taskset by its package name, so the plug-in is the top-level package
`groundstate_verifiers`, which re-exports the two classes here; `load_environment(...)` builds the env in
code. The mapping:

    Taskset.load()      one task per groundstate task of the domain and split (`GroundstateData.task_id`);
                        the system prompt is the domain's policy with the tools in the tool format's text
    Env.run()           starts the episode through the one rollout state machine (`EpisodeBridge`); the
                        user's first message opens the player's interaction, each reply of the model is
                        parsed for tool calls and played, and the tool results or the user's answer come
                        back as the next user turn, until the rollout scores the episode
    reward              the server's reward as the trace's `groundstate` reward (1.0 or 0.0); its checks
                        as metrics `check:<name>` (1.0 passed, 0.0 failed), the pin in `trace.info`
    backend_error       `run()` raises `EpisodeBackendError`: verifiers records the episode as errored
                        (`episode.errors`, `ok` false), which its trainers drop instead of scoring 0

Tool calls travel as text (the `null` harness: no sandbox, no code execution), as verifiers' own
engine-driven tasksets (OpenEnv, TextArena) carry their actions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from shared.client import DEFAULT_SERVER_URL, AsyncGroundstateClient, GroundstateClient
from shared.models import UserKind
from shared.tasks import Split
from trainer.adapters._bridge import BridgeStep, EpisodeBridge
from trainer.adapters._pin import EnvironmentPin, parse_env_id, resolve_pin
from trainer.policies.base import Message, Turn, split_stop
from trainer.policies.tool_formats import FORMATS, ToolFormat
from trainer.rollout_models import RolloutConfig, RolloutResult

__all__ = [
    "EpisodeBackendError",
    "GroundstateConfig",
    "GroundstateData",
    "GroundstateEnv",
    "GroundstateEnvConfig",
    "GroundstateTask",
    "GroundstateTaskset",
    "load_environment",
]

TASKSET_ID = "groundstate_verifiers"
"""The taskset's id: the package verifiers imports (`--env.taskset.id groundstate_verifiers`)."""


class EpisodeBackendError(RuntimeError):
    """The episode failed on infrastructure (status `backend_error`): no reward, not the agent's fault."""

    def __init__(self, result: RolloutResult) -> None:
        super().__init__(f"groundstate episode {result.episode_id} of {result.task_id}: {result.error}")
        self.result = result


class GroundstateConfig(vf.TasksetConfig):
    """Which groundstate tasks load, from which server (`--env.taskset.*`)."""

    server_url: str = DEFAULT_SERVER_URL
    """The groundstate server."""
    api_key: str | None = None
    """The server's API key, if it requires one."""
    env: str = "starter"
    """`domain` or `domain@version` (a pinned domain fingerprint); scores graded otherwise are refused."""
    split: Split | None = None
    """The split to load (`train`, `test`, ...); every task of the domain if null."""
    user: UserKind | None = None
    """The simulated user; the server's default if null."""
    max_turns: int = Field(default=30, ge=1)
    """Model turns per episode."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of an episode (past it: backend_error)."""
    tool_format: str = "hermes"
    """How the model writes tool calls and reads tool results (`trainer.policies.tool_formats.FORMATS`)."""


class GroundstateData(vf.TaskData):
    """One groundstate task, as verifiers carries it."""

    task_id: str
    """The groundstate task's id."""


class GroundstateTask(vf.Task[GroundstateData]):
    """A groundstate task."""


class GroundstateTaskset(vf.Taskset[GroundstateTask, GroundstateConfig]):
    """The tasks of one domain (and split) on a groundstate server."""

    def load(self) -> Iterator[GroundstateTask]:
        """One task per groundstate task of the domain (and split), read from the server."""
        config = self.config
        domain, _ = parse_env_id(config.env)
        fmt = _format(config.tool_format)
        with GroundstateClient(config.server_url, api_key=config.api_key) as client:
            detail = client.domain(domain)
            tasks = client.tasks(domain=domain, split=config.split)
        system = {"role": "system", "content": detail.policy}
        system_prompt = fmt.text_messages([system], detail.tools)[0]["content"]
        for task in tasks:
            data = GroundstateData(
                name=task.id,
                description=task.description,
                prompt=None,
                system_prompt=system_prompt,
                task_id=task.id,
            )
            yield GroundstateTask(data, config.task)


class GroundstateEnvConfig(vf.EnvConfig):
    """The environment: one player, the agent under training, on the tool-less `null` harness.

    The harness runs as a local subprocess: the episode's sandbox is on the groundstate server, and the
    harness executes no code.
    """

    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig())


class GroundstateEnv(vf.Env[GroundstateEnvConfig]):
    """Plays one groundstate episode per task: the server is the player's world and its user."""

    async def run(self, task: GroundstateTask, agents: Any) -> None:
        """Play the task's episode with the player and put the server's verdict on its trace."""
        config = self.config.taskset
        assert isinstance(config, GroundstateConfig)
        domain, version = parse_env_id(config.env)
        fmt = _format(config.tool_format)
        rollout = RolloutConfig(max_turns=config.max_turns, timeout_s=config.timeout_s, user=config.user)
        async with AsyncGroundstateClient(config.server_url, api_key=config.api_key) as client:
            pin = await resolve_pin(client, domain, task.data.task_id, version)
            bridge = EpisodeBridge(client, task.data.task_id, rollout, name="verifiers")
            step = await bridge.begin()
            async with agents.player.interaction(task) as interaction:
                step = await _play(bridge, step, interaction, fmt)
            _record(interaction.trace, step.result, pin)


async def _play(bridge: EpisodeBridge, step: BridgeStep, interaction: Any, fmt: ToolFormat) -> BridgeStep:
    """Relay turns between the player and the episode until the episode ends."""
    conversation: list[Message] = list(step.messages)
    seen = 1  # the system prompt is the task's own; the player reads everything after it
    while step.result is None:
        rendered = fmt.text_messages(conversation, step.tools)
        segment = await interaction.turn(
            [{"role": m["role"], "content": m["content"]} for m in rendered[seen:]]
        )
        if segment.terminated:  # the player's own turn limit: end the conversation, score what was done
            return await bridge.push(Turn(stop=True))
        text, stop = split_stop(segment.last_reply)
        content, calls = fmt.parse(text, step.tools)
        turn = Turn(content=content, tool_calls=calls, stop=stop)
        conversation.append(turn.message())
        seen = len(fmt.text_messages(conversation, step.tools))
        step = await bridge.push(turn)
        conversation.extend(step.messages)
    return step


def _record(trace: Any, result: RolloutResult | None, pin: EnvironmentPin) -> None:
    """Put the server's verdict on the player's trace, or raise a backend error for verifiers to record."""
    assert result is not None
    if result.status == "backend_error":
        raise EpisodeBackendError(result)
    assert result.score is not None and result.reward is not None
    pin.check(result.score)
    trace.record_reward("groundstate", float(result.reward))
    for check in result.score.checks:
        trace.record_metric(f"check:{check.name}", 1.0 if check.passed else 0.0)
    trace.info["groundstate"] = {
        "env_id": pin.env_id,
        "scorer_version": pin.scorer_version,
        "task_id": result.task_id,
        "episode_id": result.episode_id,
        "end_reason": result.end_reason.value,
    }


def _format(name: str) -> ToolFormat:
    if name not in FORMATS:
        raise ValueError(f"tool_format {name!r}: expected one of {', '.join(FORMATS)}")
    return FORMATS[name]


def load_environment(
    domain: str = "starter",
    split: Split | None = None,
    user: UserKind | None = None,
    server_url: str = DEFAULT_SERVER_URL,
    **options: Any,
) -> vf.Env:
    """The verifiers environment serving groundstate tasks.

    Args:
        domain: `domain` or `domain@version`.
        split: The split to load; every task of the domain if null.
        user: The simulated user (`scripted` or `llm`); the server's default if null.
        server_url: The groundstate server.
        **options: More `GroundstateConfig` fields (`api_key`, `max_turns`, `timeout_s`, `tool_format`).
    """
    taskset = GroundstateConfig(
        id=TASKSET_ID, env=domain, split=split, user=user, server_url=server_url, **options
    )
    return vf.load_environment(GroundstateEnvConfig(taskset=taskset))
