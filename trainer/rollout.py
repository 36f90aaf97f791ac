"""One episode of a policy against the server, the same code for evaluation, probing and training.

The rollout is a state machine with one handler per state:

    START   start the episode: system prompt = the domain policy, the tools, the user's first message;
            bind the policy to the episode                                              -> POLICY
    POLICY  ask the policy for a turn                -> TOOLS (tool calls) | USER (text) | SCORE (empty turn,
            turn limit reached, context overflow)
    TOOLS   run each call on the server, with an idempotency key (a resend runs once); a tool's `error`
            and an HTTP 422/413 (unknown tool, invalid or oversized arguments: the agent's mistake) go
            back to the model as the call's result
                                                                                    -> POLICY | SCORE (stop)
    USER    send the text to the simulated user      -> POLICY | SCORE (user done, stop, or a message the
            server refuses as too large: the agent's mistake, scored as it stands)
    SCORE   score the episode                                                           -> DONE

Backend failures (a retriable `ApiError`, a `TransportError`) and an episode that exceeds its time budget
end the rollout with status `backend_error` and no reward; a `PolicyError` from the policy's endpoint, and a
context overflow before the policy produced its first turn (the task's prompt does not fit the model's
context window), end it with status `policy_error` and no reward: the model never played, so the trial is
not the agent's 0. Either way the unscored episode is disposed of. Other client errors (4xx: unknown task,
bad credentials) are configuration mistakes and are raised. Everything is recorded: every turn with its
tokens and latency, every event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from enum import StrEnum
from typing import Any, Literal

from shared.client import AsyncGroundstateClient
from shared.errors import ApiError, ClientError
from shared.models import ScoreResult, ToolCallResult
from shared.text import clean_text, json_problem, text_problem
from trainer.policies.base import (
    ContextOverflowError,
    Message,
    Policy,
    PolicyError,
    PolicySpecError,
    ToolCall,
    Turn,
    new_call_id,
)
from trainer.results import TrialStatus
from trainer.rollout_models import EndReason, EventKind, RolloutConfig, RolloutEvent, RolloutResult

__all__ = ["RolloutState", "run_rollout", "tool_result_text"]


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


def tool_result_text(result: ToolCallResult) -> str:
    """What the model reads back from a tool call: the output (JSON unless a string) or `Error: ...`."""
    if result.error is not None:
        return f"Error: {result.error}"
    if isinstance(result.output, str):
        return result.output
    return json.dumps(result.output, ensure_ascii=False, default=str)


def _acceptable(turn: Turn) -> Turn:
    """The model's turn as the server can take it: whatever the model wrote never stops the rollout.

    Text is cleaned (`clean_text`: a lone surrogate becomes U+FFFD, control characters go); a call whose
    name or arguments no request may carry loses its arguments and gets a `parse_error`, which the
    model reads back as the call's result; an unusable call id is replaced. The exact tokens stay as sampled.
    """
    calls = [_acceptable_call(c) for c in turn.tool_calls]
    content = clean_text(turn.content)
    if content == turn.content and all(a is b for a, b in zip(calls, turn.tool_calls, strict=True)):
        return turn
    return turn.model_copy(update={"content": content, "tool_calls": calls})


def _acceptable_call(call: ToolCall) -> ToolCall:
    if call.parse_error is not None:
        return call.model_copy(update={"parse_error": clean_text(call.parse_error, 2_000)})
    name_problem = text_problem(call.name, identifier=True)
    problem = f"the tool name {name_problem}" if name_problem else json_problem(call.arguments, "arguments")
    bad_id = text_problem(call.id, identifier=True) is not None
    if problem is None and not bad_id:
        return call
    return call.model_copy(
        update={
            "id": new_call_id() if bad_id else call.id,
            "name": clean_text(call.name, 256),
            "arguments": {} if problem else call.arguments,
            "parse_error": f"invalid tool call: {problem}" if problem else None,
        }
    )


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
            self._fail(EndReason.POLICY_ERROR, f"policy {self.policy.name}: {exc}")
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
        except (PolicyError, ClientError, PolicySpecError):
            raise  # a PolicySpecError (e.g. an unsupported chat template) stops the campaign
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
            if not self.turns:  # the task's first prompt does not fit: the model never played
                raise PolicyError(f"the first prompt does not fit the model's context: {exc}") from exc
            self.end_reason, self.note = EndReason.CONTEXT_OVERFLOW, str(exc)
            return RolloutState.SCORE
        except PolicyError:
            raise
        except Exception as exc:
            raise PolicyError(f"{type(exc).__name__}: {exc}") from exc
        turn = _acceptable(turn)
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
                    result = await self.client.call_tool(
                        self.episode_id, call.name, call.arguments, call.id, idempotency_key=uuid.uuid4().hex
                    )
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
        if reply.content:  # a user who ends without a word says nothing (the end is `done`)
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
        failed = self.end_reason in (EndReason.BACKEND_ERROR, EndReason.TIMEOUT, EndReason.POLICY_ERROR)
        score = self.score
        if failed or score is None or score.status == "backend_error":
            status: TrialStatus = (
                "policy_error" if self.end_reason is EndReason.POLICY_ERROR else "backend_error"
            )
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
