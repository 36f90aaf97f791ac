"""What the gateway records: every model call of every episode, with its exact tokens.

A `RecordedCall` holds the request as the agent sent it (messages, tools), the answer as the agent got it
(an OpenAI assistant message), and the tokens behind them: the prompt's ids as the model read them, the
completion's ids as the model sampled them (never re-tokenised) and one log-prob per completion id.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field

from shared.strict_model import StrictModel

__all__ = ["CallRecorder", "RecordedCall"]


class RecordedCall(StrictModel):
    """One model call of an episode."""

    episode_id: str
    """The episode the agent was given (from the URL path)."""
    index: int = Field(ge=0)
    """The call's position among the episode's calls, from 0."""
    messages: list[dict[str, Any]]
    """The conversation the agent sent (OpenAI chat format)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The tools the agent sent (OpenAI `tools`)."""
    response: dict[str, Any]
    """The assistant message the agent received (content and `tool_calls`)."""
    prompt_ids: list[int]
    """The prompt's token ids exactly as the model read them (the template's rendering of the request)."""
    completion_ids: list[int]
    """The generated ids exactly as sampled, the end-of-turn token included when one was sampled."""
    logprobs: list[float]
    """Log-probability of each completion id under the model's raw distribution (same length)."""
    finish_reason: str
    """`stop`, `tool_calls` or `length`."""


class CallRecorder:
    """The recorded calls, by episode; safe to use from the gateway's request handlers and the trainer."""

    def __init__(self) -> None:
        self._calls: dict[str, list[RecordedCall]] = {}
        self._lock = threading.Lock()

    def next_index(self, episode_id: str) -> int:
        """The index the episode's next call gets."""
        with self._lock:
            return len(self._calls.get(episode_id, []))

    def add(self, call: RecordedCall) -> None:
        """Record a call."""
        with self._lock:
            self._calls.setdefault(call.episode_id, []).append(call)

    def calls(self, episode_id: str) -> list[RecordedCall]:
        """The episode's calls in order (empty if none)."""
        with self._lock:
            return list(self._calls.get(episode_id, []))

    def pop(self, episode_id: str) -> list[RecordedCall]:
        """The episode's calls, forgotten by the recorder (the trainer took them)."""
        with self._lock:
            return self._calls.pop(episode_id, [])
