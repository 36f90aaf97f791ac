"""The `groundstate:` section of a Verl training config: the server, the episodes, the curriculum.

Pure pydantic (no verl, no torch), so `groundstate train verl --dry-run` checks it on a bare box and the agent
loop reads the same model inside each Ray worker (the loop ignores the curriculum fields: the trainer process
reads them, `trainer.verl.main`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from shared.client import DEFAULT_SERVER_URL
from shared.models import MAX_MINT
from trainer.policies.tool_formats import ToolFormatName
from trainer.retry import EpisodeLimits, LegacyNames, RetrySettings

if TYPE_CHECKING:  # scipy is imported with the curriculum, not when the CLI starts
    from trainer.curriculum import CurriculumSettings

__all__ = ["AGENT_NAME", "SETTINGS_KEY", "CurriculumMode", "EpisodeSettings", "SettingsError"]

AGENT_NAME = "groundstate"
"""The agent loop's registered name: the `agent_name` of every dataset row."""
SETTINGS_KEY = "groundstate"
"""The top-level key of the Verl config that holds `EpisodeSettings`."""


CurriculumMode = Literal["static", "adaptive"]
"""`static`: Verl's own sampler draws the dataset's rows; `adaptive`: `trainer.curriculum` draws each step."""


class SettingsError(ValueError):
    """The `groundstate:` section of a training config is invalid; the message names the field."""


class EpisodeSettings(EpisodeLimits, RetrySettings, LegacyNames):
    """How the agent loop plays one training episode against the server.

    The episode limits (`max_turns`, `timeout_s`, `user`) and retries (`retries`, `retry_backoff_s`) are those
    of `eval` and `train local` (`trainer.retry`); the old names `episode_timeout_s` and `attempts` are still
    read, with a deprecation warning.
    """

    server_url: str = DEFAULT_SERVER_URL
    """The groundstate server (one URL; put several workers behind it)."""
    api_key_env: str = "GROUNDSTATE_API_KEY"
    """Environment variable holding the server's bearer key on the Ray workers (unset: no key)."""
    max_new_tokens: int | None = Field(default=None, ge=1)
    """Cap on generated tokens per turn; null leaves only the episode's response budget
    (`actor_rollout_ref.rollout.response_length`)."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """HTTP timeout of one request to the server."""
    max_connections: int = Field(default=256, ge=1)
    """Connections one agent-loop worker keeps to the server (shared by its episodes)."""
    tool_format: ToolFormatName = "auto"
    """How the model writes tool calls; `auto` reads its chat template (docs/training/chat-formats.md)."""
    summary_every_s: float = Field(default=60.0, ge=0)
    """Each agent-loop worker prints a summary line of its episodes at most this often (0: never)."""
    curriculum: CurriculumMode = "static"
    """Which sampler draws each step's tasks: Verl's (`static`) or `trainer.curriculum` (`adaptive`, run by
    `python -m trainer.verl.main`; docs/training/curriculum.md)."""
    curriculum_options: dict[str, float | int] = Field(default_factory=dict)
    """Overrides of the adaptive curriculum's settings (`decay`, `explore`, `min_informative`, `retire_at`,
    `retire_confidence`, `seed`); the group size is always `actor_rollout_ref.rollout.n`."""
    mint_per_step: int = Field(default=0, ge=0, le=MAX_MINT)
    """The most tasks the server mints into the adaptive curriculum after a step whose band ran thin (0:
    never; `adaptive` only). They become rows of the running dataset (`trainer.verl.curriculum_sampler`)."""
    gpu_memory_gb: float = Field(default=80.0, gt=0)
    """Memory of one GPU, in GB: the dry run refuses a model whose estimated share of it does not fit
    (`trainer.verl.resources`)."""

    def minting_problem(self) -> str | None:
        """Why this section cannot mint as asked (None: it can, or it does not mint)."""
        if self.mint_per_step and self.curriculum != "adaptive":
            return (
                f"{SETTINGS_KEY}.mint_per_step={self.mint_per_step} (--mint-per-step): minting feeds the "
                f"adaptive curriculum; add --curriculum adaptive ({SETTINGS_KEY}.curriculum=adaptive)"
            )
        return None

    def curriculum_settings(self, group: int, seed: int = 0) -> CurriculumSettings:
        """The adaptive curriculum's settings for groups of `group` episodes (seed: `seed` unless set).

        Raises:
            SettingsError: An option is unknown or out of range, or sets the group size.
        """
        from trainer.curriculum import CurriculumSettings

        if "group" in self.curriculum_options:
            raise SettingsError(
                f"{SETTINGS_KEY}.curriculum_options.group: the group size is actor_rollout_ref.rollout.n"
            )
        try:
            values = {"seed": seed, **self.curriculum_options, "group": group}
            return CurriculumSettings.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{SETTINGS_KEY}.curriculum_options.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors()
            )
            raise SettingsError(f"invalid curriculum: {problems}") from None

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
