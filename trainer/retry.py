"""How the trainer's episodes run and are retried: declared once for `eval`, `probe`, `train local` and Verl.

A backend failure (the server restarting, the user's LLM down) or a policy failure (the policy's endpoint
timing out) says nothing about what the policy can do, so an episode that ends in `backend_error` or
`policy_error` is rerun and never scored as a failure. Every
command that plays episodes reads the same settings (`EpisodeLimits`: turns, time, user; `RetrySettings`:
reruns and their backoff) by inheriting these models, so the fields keep one name, one default and one
meaning in every config, recipe and command line; and reruns go through `run_with_retries`, one loop for
all of them.
"""

from __future__ import annotations

import asyncio
import random
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field, model_validator

from shared.models import UserKind
from shared.strict_model import StrictModel
from trainer.rollout_models import RolloutConfig, RolloutResult

__all__ = ["EpisodeLimits", "LegacyNames", "RetrySettings", "run_with_retries"]


class EpisodeLimits(StrictModel):
    """The limits of one episode, the same for evaluation and both trainers.

    Tokens per turn are the generator's own setting (the `local:` policy's `max_new_tokens`, Verl's
    `max_new_tokens` within its response budget), since only the generator can enforce them.
    """

    max_turns: int = Field(default=30, ge=1)
    """Policy turns per episode; the episode is scored when they are used up."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of one episode attempt; past it the attempt is a backend error."""
    user: UserKind | None = None
    """The simulated user (`scripted` or `llm`); the server's default if null."""

    def rollout_config(self, seed: int | None = None) -> RolloutConfig:
        """The rollout settings of one episode under these limits."""
        return RolloutConfig(max_turns=self.max_turns, timeout_s=self.timeout_s, user=self.user, seed=seed)


class RetrySettings(StrictModel):
    """Reruns of an episode that ended in a backend error."""

    retries: int = Field(default=2, ge=0)
    """Reruns after the first attempt (0: none)."""
    retry_backoff_s: float = Field(default=1.0, ge=0)
    """Wait before the first rerun; doubles before each next one (each wait jittered: half to all of it)."""

    def backoff(self, retry: int) -> float:
        """The longest wait before rerun number `retry` (1 for the first)."""
        return float(self.retry_backoff_s * 2 ** (retry - 1))

    def wait(self, retry: int) -> float:
        """Seconds to wait before rerun number `retry`: half to all of `backoff`, at random.

        A server at capacity or restarting fails a whole step's episodes at once; without jitter their
        reruns would all come back in the same instant and meet the same refusal.
        """
        return self.backoff(retry) * random.uniform(0.5, 1.0)


class LegacyNames(StrictModel):
    """Accepts the names older configs used, with a `DeprecationWarning` saying the new one."""

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        values = dict(values)
        if "episode_timeout_s" in values:
            warnings.warn("`episode_timeout_s` is now `timeout_s`", DeprecationWarning, stacklevel=2)
            values.setdefault("timeout_s", values.pop("episode_timeout_s"))
        if "attempts" in values:
            warnings.warn(
                "`attempts` is now `retries` (reruns after the first attempt: attempts - 1)",
                DeprecationWarning,
                stacklevel=2,
            )
            attempts = values.pop("attempts")
            if isinstance(attempts, int) and "retries" not in values:
                values["retries"] = attempts - 1
        return values


async def run_with_retries(
    settings: RetrySettings,
    attempt: Callable[[int], Awaitable[RolloutResult]],
    on_backend_error: Callable[[int, RolloutResult], None] | None = None,
) -> tuple[RolloutResult, int]:
    """Run an episode until it is scored (not a backend or policy error), or the reruns are used up.

    Args:
        settings: How many reruns, and the backoff before each.
        attempt: Plays one attempt; called with its number (0 for the first).
        on_backend_error: Told of each attempt that ended unscored, in a backend or policy error (its number
            and result).

    Returns:
        The last attempt's result (unscored only if every attempt was) and its number.
    """
    number = 0
    while True:
        result = await attempt(number)
        if result.status == "scored":
            return result, number
        if on_backend_error is not None:
            on_backend_error(number, result)
        if number >= settings.retries:
            return result, number
        number += 1
        await asyncio.sleep(settings.wait(number))
