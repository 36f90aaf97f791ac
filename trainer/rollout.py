"""One episode of a policy against the server, the same code for evaluation, probing and training.

The rollout is a state machine with one handler per state:

    START   start the episode: system prompt = the domain policy, the tools, the user's first message;
            bind the policy to the episode                                              -> POLICY
    POLICY  ask the policy for a turn                -> TOOLS (tool calls) | USER (text) | SCORE (empty turn,
            turn limit reached, context overflow)
    TOOLS   run each call on the server; a tool's `error` and an HTTP 422/413 (unknown tool, invalid or
            oversized arguments: the agent's mistake) go back to the model as the call's result
                                                                                    -> POLICY | SCORE (stop)
    USER    send the text to the simulated user      -> POLICY | SCORE (user done, stop, or a message the
            server refuses as too large: the agent's mistake, scored as it stands)
    SCORE   score the episode                                                           -> DONE

Backend failures (a retriable `ApiError`, a `TransportError`, a `PolicyError` from the policy's endpoint)
and an episode that exceeds its time budget end the rollout with status `backend_error` and no reward; the
unscored episode is disposed of. Other client errors (4xx: unknown task, bad credentials) are configuration
mistakes and are raised. Everything is recorded: every turn with its tokens and latency, every event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.client import AsyncGroundstateClient
from shared.errors import ApiError, ClientError
from shared.models import ScoreResult, ToolCallResult, UserKind
from shared.tasks import Split
from trainer.policies.base import ContextOverflowError, Message, Policy, PolicyError, Turn
from trainer.results import CheckOutcome, DiffEntry, TrialResult, TrialStatus

__all__ = [
    "EndReason",
    "RolloutConfig",
    "RolloutEvent",
    "RolloutResult",
    "RolloutState",
    "run_rollout",
    "tool_result_text",
]


class RolloutState(StrEnum):
    """The states of a rollout (see the module docstring)."""

    START = "start"
    POLICY = "policy"
    TOOLS = "tools"
    USER = "user"
    SCORE = "score"
    DONE = "done"


#: HTTP statuses meaning the policy's own request was at fault (invalid or oversized): never a backend error.
AGENT_MISTAKES = (413, 422)


class EndReason(StrEnum):
    """Why the conversation ended."""

    USER_DONE = "user_done"
    """The simulated user ended it."""
    AGENT_STOP = "agent_stop"
    """The policy said it was done (`Turn.stop`)."""
    EMPTY_TURN = "empty_turn"
    """The policy produced neither text nor tool calls."""
    MAX_TURNS = "max_turns"
    """The policy used its turn limit."""
    CONTEXT_OVERFLOW = "context_overflow"
    """The conversation outgrew the model's context."""
    BACKEND_ERROR = "backend_error"
    """The server or the policy's endpoint failed."""
    TIMEOUT = "timeout"
    """The episode exceeded its time budget."""
    INVALID_MESSAGE = "invalid_message"
    """The server refused the policy's message to the user (over its size limit): scored as it stands."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RolloutConfig(_Model):
    """Limits and options of one rollout."""

    max_turns: int = Field(default=30, ge=1)
    """Policy turns allowed; the episode is scored when they are used up."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of the whole episode; past it the rollout is a backend error."""
    user: UserKind | None = None
    """The simulated user (`scripted` or `llm`); the server's default if null."""
    seed: int | None = None
    """Seed of the LLM user's sampling."""


EventKind = Literal[
    "episode_started", "policy_turn", "tool_call", "assistant_message", "user_message", "scored", "failed"
]


class RolloutEvent(_Model):
    """One thing that happened in the rollout."""

    t: float
    """Seconds since the rollout started."""
    kind: EventKind
    """What happened."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Details: ids, names, arguments, results, tokens, latencies."""


class RolloutResult(_Model):
    """A finished rollout: outcome, every turn with its tokens, the transcript and the event log."""

    task_id: str
    """The task's id."""
    domain: str | None = None
    """The task's domain; null when the episode never started."""
    policy: str
    """The policy's name."""
    episode_id: str | None = None
    """The server's episode id; null when the episode never started."""
    status: TrialStatus
    """`scored`, or `backend_error` (server, policy endpoint or timeout failure: no reward)."""
    reward: Literal[0, 1] | None = None
    """The server's reward; null exactly for a backend error."""
    end_reason: EndReason
    """Why the conversation ended."""
    error: str | None = None
    """The failure's message, or a note on an agent-side end (turn limit, context overflow, empty turn)."""
    latency_s: float = 0.0
    """Wall-clock seconds from the start of the episode to its score (or failure)."""
    turns: list[Turn] = Field(default_factory=list)
    """Every policy turn, in order, with its tokens (and token ids for token-level policies)."""
    tool_calls: int = 0
    """Tool calls the policy made (including ones that failed to parse or were rejected)."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The conversation in OpenAI chat format, as the policy saw it."""
    events: list[RolloutEvent] = Field(default_factory=list)
    """The event log."""
    score: ScoreResult | None = None
    """The server's verdict; null when the episode was not scored."""

    @property
    def tokens_in(self) -> int:
        """Prompt tokens summed over the turns."""
        return sum(t.tokens_in for t in self.turns)

    @property
    def tokens_out(self) -> int:
        """Generated tokens summed over the turns."""
        return sum(t.tokens_out for t in self.turns)

    def token_ids(self) -> list[int]:
        """The episode's whole token sequence (token-level policies): each turn's context, then its output.

        Raises:
            ValueError: A turn carries no token ids (the policy is not token-level).
        """
        ids: list[int] = []
        for turn in self._token_turns():
            ids += (turn.context_ids or []) + (turn.token_ids or [])
        return ids

    def loss_mask(self) -> list[int]:
        """1 for generated tokens, 0 for prompt, tool and user tokens; aligned with `token_ids()`.

        Raises:
            ValueError: A turn carries no token ids.
        """
        mask: list[int] = []
        for turn in self._token_turns():
            mask += [0] * len(turn.context_ids or []) + [1] * len(turn.token_ids or [])
        return mask

    def _token_turns(self) -> list[Turn]:
        if any(t.token_ids is None or t.context_ids is None for t in self.turns):
            raise ValueError(f"policy {self.policy} is not token-level: its turns carry no token ids")
        return self.turns

    def to_trial(
        self, *, split: Split, trial: int, sample: int = 0, domain: str | None = None
    ) -> TrialResult:
        """The rollout as one line of `results.jsonl`.

        Args:
            split: The task's split.
            trial: The trial index.
            sample: 0, or the candidate index of a best-of-N trial.
            domain: The task's domain, needed when the episode never started.

        Raises:
            ValueError: The domain is unknown.
        """
        domain = self.domain or domain
        if not domain:
            raise ValueError(f"rollout of {self.task_id} never started: pass its domain")
        score = self.score
        return TrialResult(
            task_id=self.task_id,
            domain=domain,
            split=split,
            trial=trial,
            sample=sample,
            policy=self.policy,
            status=self.status,
            reward=self.reward,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            turns=len(self.turns),
            tool_calls=self.tool_calls,
            latency_s=round(self.latency_s, 3),
            error=self.error,
            episode_id=self.episode_id,
            diff=[DiffEntry(kind=d.kind, table=d.table, key=d.key, column=d.column) for d in score.diff]
            if score
            else [],
            failed_checks=[
                CheckOutcome(name=c.name, passed=c.passed, detail=c.detail)
                for c in score.checks
                if not c.passed
            ]
            if score
            else [],
        )


def tool_result_text(result: ToolCallResult) -> str:
    """What the model reads back from a tool call: the output (JSON unless a string) or `Error: ...`."""
    if result.error is not None:
        return f"Error: {result.error}"
    if isinstance(result.output, str):
        return result.output
    return json.dumps(result.output, ensure_ascii=False, default=str)


async def run_rollout(
    client: AsyncGroundstateClient, policy: Policy, task_id: str, config: RolloutConfig | None = None
) -> RolloutResult:
    """Run one episode of `task_id` with `policy` and score it.

    Args:
        client: The server client.
        policy: The policy (bound to the episode inside the rollout).
        task_id: The task to play.
        config: Turn limit, time budget, simulated user and seed.

    Returns:
        The result; backend failures and timeouts come back as status `backend_error`, not raised.

    Raises:
        ApiError: The server rejected a request for a reason retrying cannot fix (a 4xx other than a tool
            call's 422): unknown task, bad credentials, an unconfigured simulated user.
    """
    return await _Rollout(client, policy, task_id, config or RolloutConfig()).run()


class _Rollout:
    """The mutable state of one rollout and its state handlers."""

    def __init__(
        self, client: AsyncGroundstateClient, policy: Policy, task_id: str, config: RolloutConfig
    ) -> None:
        self.client, self.policy, self.task_id, self.config = client, policy, task_id, config
        self.bound = policy
        self.state = RolloutState.START
        self.t0 = time.monotonic()
        self.episode_id: str | None = None
        self.domain: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.messages: list[Message] = []
        self.turns: list[Turn] = []
        self.tool_calls = 0
        self.events: list[RolloutEvent] = []
        self.end_reason: EndReason | None = None
        self.note: str | None = None
        self.score: ScoreResult | None = None
        self.handlers = {
            RolloutState.START: self._start,
            RolloutState.POLICY: self._policy,
            RolloutState.TOOLS: self._tools,
            RolloutState.USER: self._user,
            RolloutState.SCORE: self._score,
        }

    async def run(self) -> RolloutResult:
        scope = asyncio.timeout(self.config.timeout_s)
        try:
            async with scope:
                while self.state is not RolloutState.DONE:
                    self.state = await self.handlers[self.state]()
        except TimeoutError:
            if not scope.expired():
                raise
            self._fail(
                EndReason.TIMEOUT, f"episode timed out after {self.config.timeout_s:g} s in {self.state}"
            )
        except PolicyError as exc:
            self._fail(EndReason.BACKEND_ERROR, f"policy {self.policy.name}: {exc}")
        except ClientError as exc:
            if not exc.retriable:
                await self._dispose()
                raise
            self._fail(EndReason.BACKEND_ERROR, f"server: {exc}")
        if self.score is None:
            await self._dispose()
        return self._result()

    def _event(self, kind: EventKind, **data: Any) -> None:
        self.events.append(RolloutEvent(t=round(time.monotonic() - self.t0, 4), kind=kind, data=data))

    def _fail(self, reason: EndReason, message: str) -> None:
        self.end_reason, self.note = reason, message
        self._event("failed", reason=reason.value, state=self.state.value, error=message)

    async def _dispose(self) -> None:
        """Best effort: free an unscored episode's sandbox (its events stay in the server's store)."""
        if self.episode_id is None:
            return
        with contextlib.suppress(ClientError, TimeoutError):
            async with asyncio.timeout(10):
                await self.client.dispose(self.episode_id)

    async def _start(self) -> RolloutState:
        begun = time.monotonic()
        started = await self.client.start_episode(self.task_id, user=self.config.user, seed=self.config.seed)
        self.episode_id, self.domain, self.tools = started.episode_id, started.domain, started.tools
        self.messages = [
            {"role": "system", "content": started.system_prompt},
            {"role": "user", "content": started.first_message},
        ]
        self._event(
            "episode_started",
            episode_id=started.episode_id,
            user=started.user,
            latency_s=round(time.monotonic() - begun, 4),
        )
        try:
            self.bound = await self.policy.for_episode(started, self.client)
        except (PolicyError, ClientError):
            raise
        except Exception as exc:
            raise PolicyError(f"binding to the episode failed: {type(exc).__name__}: {exc}") from exc
        return RolloutState.POLICY

    async def _policy(self) -> RolloutState:
        if len(self.turns) >= self.config.max_turns:
            self.end_reason, self.note = EndReason.MAX_TURNS, f"turn limit of {self.config.max_turns} reached"
            return RolloutState.SCORE
        started = time.monotonic()
        try:
            turn = await self.bound.respond(list(self.messages), self.tools)
        except ContextOverflowError as exc:
            self.end_reason, self.note = EndReason.CONTEXT_OVERFLOW, str(exc)
            return RolloutState.SCORE
        except PolicyError:
            raise
        except Exception as exc:
            raise PolicyError(f"{type(exc).__name__}: {exc}") from exc
        self.turns.append(turn)
        self.messages.append(turn.message())
        self._event(
            "policy_turn",
            turn=len(self.turns),
            latency_s=round(time.monotonic() - started, 4),
            tokens_in=turn.tokens_in,
            tokens_out=turn.tokens_out,
            tool_calls=[c.name for c in turn.tool_calls],
            stop=turn.stop,
            finish_reason=turn.finish_reason,
        )
        if turn.tool_calls:
            return RolloutState.TOOLS
        if turn.content:
            return RolloutState.USER
        if turn.stop:
            self.end_reason = EndReason.AGENT_STOP
        else:
            self.end_reason, self.note = (
                EndReason.EMPTY_TURN,
                "the policy produced neither text nor tool calls",
            )
        return RolloutState.SCORE

    async def _tools(self) -> RolloutState:
        turn = self.turns[-1]
        assert self.episode_id is not None
        for call in turn.tool_calls:
            started = time.monotonic()
            if call.parse_error is not None:
                text, outcome = f"Error: {call.parse_error}", "unparsable"
            else:
                try:
                    result = await self.client.call_tool(self.episode_id, call.name, call.arguments, call.id)
                    text, outcome = tool_result_text(result), "error" if result.error is not None else "ok"
                except ApiError as exc:
                    if exc.status not in AGENT_MISTAKES:
                        raise
                    text, outcome = f"Error: {exc.message}", exc.code
            self.tool_calls += 1
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            self._event(
                "tool_call",
                name=call.name,
                arguments=call.arguments,
                outcome=outcome,
                result=text,
                latency_s=round(time.monotonic() - started, 4),
            )
        if turn.stop:
            self.end_reason = EndReason.AGENT_STOP
            return RolloutState.SCORE
        return RolloutState.POLICY

    async def _user(self) -> RolloutState:
        turn = self.turns[-1]
        assert self.episode_id is not None
        started = time.monotonic()
        try:
            reply = await self.client.send_message(self.episode_id, turn.content)
        except ApiError as exc:
            if exc.status not in AGENT_MISTAKES:
                raise
            self._event("assistant_message", content=turn.content[:2000], refused=exc.message)
            self.end_reason = EndReason.INVALID_MESSAGE  # e.g. a runaway message over the server's limit
            return RolloutState.SCORE
        self._event("assistant_message", content=turn.content)
        self._event(
            "user_message",
            content=reply.content,
            done=reply.done,
            latency_s=round(time.monotonic() - started, 4),
        )
        self.messages.append({"role": "user", "content": reply.content})
        if reply.done:
            self.end_reason = EndReason.USER_DONE
            return RolloutState.SCORE
        if turn.stop:
            self.end_reason = EndReason.AGENT_STOP
            return RolloutState.SCORE
        return RolloutState.POLICY

    async def _score(self) -> RolloutState:
        assert self.episode_id is not None
        started = time.monotonic()
        self.score = await self.client.score(self.episode_id)
        self._event(
            "scored",
            status=self.score.status,
            reward=self.score.reward,
            error=self.score.error,
            latency_s=round(time.monotonic() - started, 4),
        )
        return RolloutState.DONE

    def _result(self) -> RolloutResult:
        failed = self.end_reason in (EndReason.BACKEND_ERROR, EndReason.TIMEOUT)
        score = self.score
        if failed or score is None or score.status == "backend_error":
            status: TrialStatus = "backend_error"
            reward: Literal[0, 1] | None = None
            error = self.note if failed or score is None else f"server scoring: {score.error}"
        else:
            status, error = "scored", self.note
            reward = 1 if score.reward == 1 else 0
        return RolloutResult(
            task_id=self.task_id,
            domain=self.domain,
            policy=self.policy.name,
            episode_id=self.episode_id,
            status=status,
            reward=reward,
            end_reason=self.end_reason or EndReason.BACKEND_ERROR,
            error=error,
            latency_s=time.monotonic() - self.t0,
            turns=self.turns,
            tool_calls=self.tool_calls,
            messages=self.messages,
            events=self.events,
            score=score,
        )
