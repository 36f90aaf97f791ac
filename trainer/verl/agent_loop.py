"""`GroundstateAgentLoop`: one whole groundstate episode as a Verl agent loop (verl 0.9.1, unpatched).

Verl builds one loop per sample and awaits `run(sampling_params, **row)`. The loop plays the row's task on
the server with the rollout state machine that evaluation uses (`trainer.rollout.run_rollout`): start the
episode, generate through Verl's `server_manager` (vLLM on a cluster), run tool calls on the server, send
the assistant's text to the simulated user, stop on the user's end, the turn limit or the response budget,
score. The prompt and every later context are rendered by `trainer.policies.chat_format`, the module the
`local:` evaluation policy renders through, so training sees what evaluation sees.

What Verl gets back (`AgentLoopOutput`):

    prompt_ids         system prompt + tools + first user message, as rendered for generation
    response_ids       generated turns (mask 1) and what came between them: tool results, user replies,
                       template markup (mask 0); generated ids are exactly the sampled ones
    response_logprobs  the sampler's log-prob of each generated id, 0.0 on environment tokens
    reward_score       the server's reward (0 or 1); it replaces Verl's reward function
    extra_fields       `reward_extra_info` (per-episode metrics: the filter_groups metric `gs_reward`, turns,
                       tool calls, environment seconds, end reason...) and `groundstate` (ids, end reason)

A backend failure never becomes a reward: an attempt that fails on the backend (server 5xx or unreachable,
scoring `backend_error`, the user or judge endpoint down, the time budget) is retried as a fresh episode
(`retries`, `trainer.retry`, as in `eval` and `train local`); if the last attempt fails, `run` raises, and
so do the other sessions of its GRPO group (the rows sharing its `uid`), which wait for each other before
returning. Verl's V1 trainer marks a group whose
sessions raised `failure`; with no trajectory stored the replay buffer evicts it and samples a replacement
prompt (`training/rollout_failure/evicted_samples`; sync mode needs
`trainer.v1.sampler.sync_refill_failed_groups=true`, which the recipes set). This process counts them too
(`failure_counts()`, and a warning per dropped group).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput

from shared.client import AsyncGroundstateClient
from trainer.policies.base import ContextOverflowError, Message, Policy, PolicyError, Turn
from trainer.policies.chat_format import ChatFormat, EpisodeTokens, IncrementalRenderError
from trainer.retry import run_with_retries
from trainer.rollout import run_rollout
from trainer.rollout_models import EndReason, RolloutResult
from trainer.verl.settings import SETTINGS_KEY, EpisodeSettings

__all__ = [
    "REWARD_INFO_KEYS",
    "EpisodeFailedError",
    "FailureCounts",
    "GroundstateAgentLoop",
    "GroupDroppedError",
    "failure_counts",
]

logger = logging.getLogger(__name__)

REWARD_INFO_KEYS = (
    "gs_reward",
    "gs_turns",
    "gs_tool_calls",
    "gs_env_seconds",
    "gs_generate_seconds",
    "gs_attempts",
    "gs_response_tokens",
    *(f"gs_end_{reason.value}" for reason in EndReason),
)
"""The keys of `extra_fields["reward_extra_info"]`, the same for every episode (Verl stacks them per key)."""


class EpisodeFailedError(RuntimeError):
    """Every attempt at an episode failed on the backend: no trajectory, no reward, the group is dropped."""


class GroupDroppedError(RuntimeError):
    """Another session of this GRPO group failed on the backend, so this one returns no trajectory either."""


@dataclass
class FailureCounts:
    """Backend failures seen by the agent loops of this process."""

    failed_attempts: int = 0
    """Episode attempts that failed on the backend (each one retried or given up)."""
    failed_episodes: int = 0
    """Episodes whose every attempt failed."""
    dropped_groups: int = 0
    """GRPO groups dropped because one of their episodes failed."""
    dropped_sessions: int = 0
    """Sessions (episodes) in those groups, failed or not."""


_COUNTS = FailureCounts()


def failure_counts() -> FailureCounts:
    """A copy of this process's failure counters."""
    return FailureCounts(**vars(_COUNTS))


@dataclass
class _Summary:
    """Episodes finished since the last summary line of this worker process."""

    values: dict[str, list[float]] = field(default_factory=dict)
    ends: Counter[str] = field(default_factory=Counter)
    last: float = field(default_factory=time.monotonic)

    def add(self, info: dict[str, float], end_reason: str, every_s: float) -> None:
        for key in ("gs_reward", "gs_turns", "gs_tool_calls", "gs_env_seconds", "gs_generate_seconds"):
            self.values.setdefault(key, []).append(info[key])
        self.values.setdefault("retried", []).append(float(info["gs_attempts"] > 1))
        self.ends[end_reason] += 1
        if every_s > 0 and time.monotonic() - self.last >= every_s:
            self.flush()

    def flush(self) -> None:
        episodes = len(self.values.get("gs_reward", []))
        if episodes:
            means = " ".join(f"{k.removeprefix('gs_')}={sum(v) / len(v):.3g}" for k, v in self.values.items())
            ends = ",".join(f"{reason}:{count}" for reason, count in sorted(self.ends.items()))
            print(
                f"groundstate agent loop [pid {os.getpid()}]: {episodes} episodes, mean {means}; "
                f"ends {ends}; "
                f"failed attempts {_COUNTS.failed_attempts}, failed episodes {_COUNTS.failed_episodes}, "
                f"dropped groups {_COUNTS.dropped_groups}",
                flush=True,
            )
        self.values, self.ends, self.last = {}, Counter(), time.monotonic()


_SUMMARY = _Summary()


@dataclass
class _Group:
    """The sessions of one GRPO group running in this process, settling together."""

    uid: str
    members: int = 0
    settled: int = 0
    failures: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def leave(self, failure: str | None) -> None:
        """Record one session's outcome; the last one releases the others."""
        if failure is not None:
            self.failures.append(failure)
        self.settled += 1
        if self.settled < self.members:
            return
        _GROUPS.pop(self.uid, None)
        if self.failures:
            _COUNTS.dropped_groups += 1
            _COUNTS.dropped_sessions += self.members
            logger.warning(
                "groundstate: dropped GRPO group %s (%d sessions, %d failed on the backend): %s",
                self.uid,
                self.members,
                len(self.failures),
                self.failures[0],
            )
        self.done.set()

    async def settle(self, failure: str | None) -> list[str]:
        """Record this session's outcome and wait for the rest of the group; returns the group's failures."""
        self.leave(failure)
        await self.done.wait()
        return list(self.failures)


_GROUPS: dict[str, _Group] = {}


def _join(uid: Any) -> _Group:
    """Join the group of `uid` (a session without a uid is a group of its own).

    Must be called before the session's first `await`: Verl creates every session of a group in one
    synchronous loop (`_run_prompt` in V1, `generate_sequences` in V0), so all of them have joined before any
    can finish, and a group's size needs no configuration (`rollout.n` and `val_kwargs.n` differ).
    """
    if uid is None:
        group = _Group(uid=f"solo-{uuid.uuid4().hex}")
    else:
        group = _GROUPS.setdefault(str(uid), _Group(uid=str(uid)))
    group.members += 1
    return group


@dataclass
class _SharedClient:
    client: AsyncGroundstateClient
    users: int = 0


_CLIENTS: dict[tuple[Any, ...], _SharedClient] = {}
_EOS: dict[str, list[int]] = {}


@asynccontextmanager
async def _client(settings: EpisodeSettings, api_key: str | None) -> AsyncIterator[AsyncGroundstateClient]:
    """One connection pool per server, key and event loop, shared by the episodes running on a worker.

    The last episode to leave closes it: a pool left to the garbage collector leaks its aiohttp session
    ("Unclosed client session"); the next episode opens a fresh one.
    """
    key = (settings.server_url, api_key, settings.request_timeout_s, id(asyncio.get_running_loop()))
    shared = _CLIENTS.get(key)
    if shared is None:
        shared = _CLIENTS[key] = _SharedClient(
            AsyncGroundstateClient(
                settings.server_url,
                api_key=api_key,
                timeout=settings.request_timeout_s,
                max_connections=settings.max_connections,
            )
        )
    shared.users += 1
    try:
        yield shared.client
    finally:
        shared.users -= 1
        if shared.users == 0:
            if _CLIENTS.get(key) is shared:
                del _CLIENTS[key]
            await shared.client.aclose()


def _model_eos_ids(model_path: str | None) -> list[int]:
    """The end-of-turn ids of the model's generation config (vLLM stops on them), or none if not on disk.

    Read from a local directory or the local Hugging Face cache only: a worker never goes to the network.
    """
    if not model_path:
        return []
    if model_path not in _EOS:
        try:
            from transformers import GenerationConfig

            eos = GenerationConfig.from_pretrained(model_path, local_files_only=True).eos_token_id
        except (OSError, ValueError):
            eos = None
        _EOS[model_path] = [eos] if isinstance(eos, int) else list(eos or [])
    return _EOS[model_path]


def _section(config: DictConfig) -> dict[str, Any]:
    section = config.get(SETTINGS_KEY)
    if section is None:
        return {}
    values = OmegaConf.to_container(section, resolve=True) if isinstance(section, DictConfig) else section
    return {str(k): v for k, v in values.items()} if isinstance(values, dict) else {}


def _task_id(row: dict[str, Any]) -> str:
    extra = row.get("extra_info")
    task_id = extra.get("task_id") if isinstance(extra, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(
            "a groundstate dataset row needs extra_info.task_id (build the data with `groundstate train "
            f"dataset`); got extra_info={extra!r}"
        )
    return task_id


class GroundstateAgentLoop(AgentLoopBase):
    """Plays one groundstate episode per sample; registered as `groundstate` (see `configs/agent_loops.yaml`).

    Settings come from the `groundstate:` section of the training config (`EpisodeSettings`); keyword
    arguments of the registration YAML override them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        overrides = {name: kwargs.pop(name) for name in list(kwargs) if name in EpisodeSettings.model_fields}
        kwargs.pop("tools", None)  # Verl's own tool list: our tools live on the server
        super().__init__(*args, **kwargs)
        self.settings = EpisodeSettings.parse({**_section(self.config), **overrides})
        model_path = self.config.actor_rollout_ref.model.get("path")
        self.format = ChatFormat.of(  # an unsupported chat template is refused here, at start
            self.tokenizer, eos_ids=_model_eos_ids(model_path), tool_format=self.settings.tool_format
        )
        self.prompt_length = int(self.rollout_config.prompt_length)
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play the row's task (`extra_info.task_id`) and return its tokens, reward and metrics.

        Raises:
            EpisodeFailedError: Every attempt failed on the backend (the group is dropped).
            GroupDroppedError: Another session of the group failed on the backend.
            ValueError: The row has no task id, or the prompt does not fit `rollout.prompt_length`.
        """
        group = _join(kwargs.get("uid"))  # before the first await (see _join)
        failure: str | None = None
        output: AgentLoopOutput | None = None
        try:
            output = await self._play(_task_id(kwargs), sampling_params)
        except EpisodeFailedError as exc:
            failure = str(exc)
        except BaseException as exc:
            group.leave(f"{type(exc).__name__}: {exc}")
            raise
        failures = await group.settle(failure)
        if failure is not None:
            raise EpisodeFailedError(failure)
        if failures or output is None:
            raise GroupDroppedError(f"GRPO group {group.uid} dropped: {failures[0]}")
        return output

    async def _play(self, task_id: str, sampling_params: dict[str, Any]) -> AgentLoopOutput:
        api_key = os.environ.get(self.settings.api_key_env) or None
        async with _client(self.settings, api_key) as client:
            return await self._attempts(client, task_id, sampling_params)

    async def _attempts(
        self, client: AsyncGroundstateClient, task_id: str, sampling_params: dict[str, Any]
    ) -> AgentLoopOutput:
        config = self.settings.rollout_config()
        causes: list[str] = []
        policies: list[_EpisodePolicy] = []

        async def attempt(_: int) -> RolloutResult:
            policies.append(_EpisodePolicy(self, sampling_params))
            result = await run_rollout(client, policies[-1], task_id, config)
            if policies[-1].config_error is not None:
                raise ValueError(policies[-1].config_error)
            return result

        def failed(number: int, result: RolloutResult) -> None:
            _COUNTS.failed_attempts += 1
            causes.append(f"attempt {number + 1}: {result.error}")
            logger.warning("groundstate: episode of %s failed on the backend: %s", task_id, result.error)

        result, number = await run_with_retries(self.settings, attempt, failed)
        if result.status != "scored":
            _COUNTS.failed_episodes += 1
            raise EpisodeFailedError(
                f"task {task_id}: every attempt failed on the backend ({'; '.join(causes)})"
            )
        output = self._output(result, policies[-1], number + 1)
        info = output.extra_fields["reward_extra_info"]
        _SUMMARY.add(info, result.end_reason.value, self.settings.summary_every_s)
        return output

    def _output(self, result: RolloutResult, policy: _EpisodePolicy, attempt: int) -> AgentLoopOutput:
        turns = result.turns
        if not turns:
            raise ValueError(f"episode {result.episode_id} was scored without a single generated turn")
        prompt = list(turns[0].context_ids or [])
        response: list[int] = []
        mask: list[int] = []
        logprobs: list[float] = []
        for index, turn in enumerate(turns):
            context = [] if index == 0 else list(turn.context_ids or [])
            generated = list(turn.token_ids or [])
            response += context + generated
            mask += [0] * len(context) + [1] * len(generated)
            logprobs += [0.0] * len(context) + list(turn.logprobs or [0.0] * len(generated))
        env_seconds = max(0.0, result.latency_s - policy.generate_s)
        reward = float(result.reward or 0)
        info: dict[str, float] = {
            "gs_reward": reward,
            "gs_turns": float(len(turns)),
            "gs_tool_calls": float(result.tool_calls),
            "gs_env_seconds": round(env_seconds, 4),
            "gs_generate_seconds": round(policy.generate_s, 4),
            "gs_attempts": float(attempt),
            "gs_response_tokens": float(len(response)),
            **{f"gs_end_{reason.value}": float(result.end_reason is reason) for reason in EndReason},
        }
        return AgentLoopOutput(
            prompt_ids=prompt,
            response_ids=response,
            response_mask=mask,
            response_logprobs=logprobs if all(t.logprobs is not None for t in turns) else None,
            reward_score=reward,
            num_turns=len(result.messages) - 1,
            metrics=AgentLoopMetrics(
                generate_sequences=policy.generate_s,
                tool_calls=env_seconds,
                compute_score=_score_seconds(result),
            ),
            extra_fields={
                "reward_extra_info": info,
                "groundstate": {
                    "task_id": result.task_id,
                    "domain": result.domain,
                    "episode_id": result.episode_id,
                    "end_reason": result.end_reason.value,
                    "attempts": attempt,
                    "failed_checks": [c.name for c in result.score.checks if not c.passed]
                    if result.score
                    else [],
                },
            },
        )


def _score_seconds(result: RolloutResult) -> float:
    """Seconds between the last event before scoring and the score (the server's scoring time, roughly)."""
    times = [event.t for event in result.events]
    kinds = [event.kind for event in result.events]
    if "scored" not in kinds:
        return 0.0
    at = kinds.index("scored")
    return max(0.0, times[at] - (times[at - 1] if at else 0.0))


class _EpisodePolicy(Policy):
    """The policy of one episode attempt: Verl's server manager generates, `EpisodeTokens` keeps the ids."""

    name = "verl"

    def __init__(self, loop: GroundstateAgentLoop, sampling_params: dict[str, Any]) -> None:
        self.loop = loop
        self.params = dict(sampling_params)
        self.tokens = EpisodeTokens(loop.format)
        self.request_id = uuid.uuid4().hex
        self.prompt_tokens = 0
        self.generate_s = 0.0
        self.config_error: str | None = None

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Append the new context, generate within the response budget, and parse the turn."""
        try:
            context = self.tokens.context(messages, tools)
        except IncrementalRenderError as exc:
            raise PolicyError(str(exc)) from exc
        loop = self.loop
        first = not self.tokens.ids
        if first and len(context) > loop.prompt_length:
            self.config_error = (
                f"the episode's prompt has {len(context)} tokens, more than rollout.prompt_length="
                f"{loop.prompt_length}: raise data.max_prompt_length"
            )
            raise ContextOverflowError(self.config_error)
        used = 0 if first else len(self.tokens.ids) - self.prompt_tokens + len(context)
        remaining = loop.response_length - used
        if remaining <= 0:
            raise ContextOverflowError(f"the response budget of {loop.response_length} tokens is used up")
        max_tokens = min(remaining, loop.settings.max_new_tokens or remaining)
        self.tokens.add_context(context)
        if first:
            self.prompt_tokens = len(context)
        tokens_in = len(self.tokens.ids)
        started = time.monotonic()
        try:
            output = await loop.server_manager.generate(
                request_id=self.request_id,
                prompt_ids=list(self.tokens.ids),
                sampling_params={**self.params, "max_tokens": max_tokens},
            )
        except Exception as exc:
            raise PolicyError(f"generation failed: {type(exc).__name__}: {exc}") from exc
        finally:
            self.generate_s += time.monotonic() - started
        if output.stop_reason == "aborted":
            raise PolicyError("generation was aborted by the rollout server")
        token_ids = [int(t) for t in output.token_ids][:max_tokens]
        logprobs = (
            None if output.log_probs is None else [float(x) for x in output.log_probs][: len(token_ids)]
        )
        self.tokens.add_generated(token_ids, seen=len(messages))
        return loop.format.turn(token_ids, logprobs, context_ids=context, tokens_in=tokens_in, tools=tools)
