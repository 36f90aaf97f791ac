"""The `groundstate:` section of a Verl training config: where the server is and how an episode runs.

Pure pydantic (no verl, no torch), so `groundstate train verl --dry-run` checks it on a bare box and the agent
loop reads the same model inside each Ray worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from shared.models import UserKind
from shared.strict_model import StrictModel

__all__ = ["AGENT_NAME", "SETTINGS_KEY", "EpisodeSettings", "SettingsError"]

AGENT_NAME = "groundstate"
"""The agent loop's registered name: the `agent_name` of every dataset row."""
SETTINGS_KEY = "groundstate"
"""The top-level key of the Verl config that holds `EpisodeSettings`."""


class SettingsError(ValueError):
    """The `groundstate:` section of a training config is invalid; the message names the field."""


class EpisodeSettings(StrictModel):
    """How the agent loop plays one training episode against the server."""

    server_url: str = "http://127.0.0.1:8000"
    """The groundstate server (one URL; put several workers behind it)."""
    api_key_env: str = "GROUNDSTATE_API_KEY"
    """Environment variable holding the server's bearer key on the Ray workers (unset: no key)."""
    user: UserKind | None = None
    """The simulated user (`scripted` or `llm`); the server's default if null."""
    max_turns: int = Field(default=30, ge=1)
    """Policy turns per episode; the episode is scored when they are used up."""
    max_new_tokens: int | None = Field(default=None, ge=1)
    """Cap on generated tokens per turn; null leaves only the episode's response budget
    (`actor_rollout_ref.rollout.response_length`)."""
    episode_timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of one episode attempt; past it the attempt is a backend failure."""
    attempts: int = Field(default=2, ge=1)
    """Fresh episodes tried when one fails on the backend; if the last fails too, its group is dropped."""
    retry_backoff_s: float = Field(default=5.0, ge=0)
    """Seconds to wait before a fresh attempt (a server restarting, a user endpoint recovering)."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """HTTP timeout of one request to the server."""
    max_connections: int = Field(default=256, ge=1)
    """Connections one agent-loop worker keeps to the server (shared by its episodes)."""
    summary_every_s: float = Field(default=60.0, ge=0)
    """Each agent-loop worker prints a summary line of its episodes at most this often (0: never)."""

    @classmethod
    def parse(cls, values: Mapping[str, Any] | None) -> EpisodeSettings:
        """Validate a config section.

        Raises:
            SettingsError: A field is unknown or invalid (the message names it, as `groundstate.FIELD`).
        """
        try:
            return cls.model_validate(dict(values or {}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{SETTINGS_KEY}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise SettingsError(f"invalid training config: {problems}") from None
