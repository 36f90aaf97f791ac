"""Wire models of the OpenEnv surface (`/openenv`): what `reset` and `step` take and what they return.

OpenEnv's WebSocket protocol carries free JSON objects (`{"type": "step", "data": {...}}`); these models
fix what groundstate reads from `data` and writes back, and `/openenv/schema` publishes their JSON schemas.
An OpenEnv client sends them as plain dicts (`GenericEnvClient`), so nothing here depends on `openenv`.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, model_validator

from shared.models import (
    TOOL_KINDS_DESCRIPTION,
    TOOLS_DESCRIPTION,
    ErrorBody,
    ScoreResult,
    ToolCallResult,
    ToolKind,
    UserKind,
    WireModel,
)
from shared.text import RequestModel

__all__ = ["OpenEnvAction", "OpenEnvObservation", "OpenEnvReset", "OpenEnvState", "OpenEnvStep"]


class OpenEnvReset(RequestModel):
    """`reset(...)`'s keyword arguments: which task the new episode plays."""

    identifiers = frozenset({"task_id"})

    task_id: str = Field(description="The task to play, e.g. a row's task id in a training dataset.")
    user: UserKind | None = Field(default=None, description="Simulated user; the server default if omitted.")
    seed: int | None = Field(default=None, description="Seed for the LLM user's sampling.")


class OpenEnvAction(RequestModel):
    """One step: a tool call (`name` + `arguments`), a message to the user (`message`), or `end`.

    A tool call is spelt as OpenAI, REST, `/v1/score` and a task's gold spell it. The old key `tool` for the
    name is still read (deprecated; `name` wins the docs and the schema).

    Examples: `{"name": "get_booking", "arguments": {"booking_id": "BK-20417"}}`,
    `{"message": "I have filed the change for manager approval."}`, `{"end": true}`.
    """

    identifiers = frozenset({"name", "call_id"})

    name: str | None = Field(default=None, description="Name of the tool to call in the episode's sandbox.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    call_id: str | None = Field(default=None, description="The model's tool-call id, echoed back.")
    message: str | None = Field(default=None, description="Text to the simulated user; the reply comes back.")
    end: bool = Field(default=False, description="End the episode now and score it.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free metadata (OpenEnv's `Action`).")

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        """Read the deprecated `{"tool": ...}` as `{"name": ...}` (the spelling before OpenAI's)."""
        if isinstance(data, dict) and "tool" in data:
            if "name" in data:
                raise ValueError("give `name` or the deprecated `tool`, not both")
            return {("name" if k == "tool" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        chosen = [
            kind
            for kind, on in (
                ("name", self.name is not None),
                ("message", self.message is not None),
                ("end", self.end),
            )
            if on
        ]
        if len(chosen) != 1:
            raise ValueError(
                "a step is exactly one of a tool call (name), a message or end "
                f"(got: {', '.join(chosen) or 'none'})"
            )
        if self.arguments and self.name is None:
            raise ValueError("arguments go with a tool call (name)")
        return self


class OpenEnvObservation(WireModel):
    """What the agent sees after `reset` or a `step` (reward and done travel beside it, as OpenEnv wants)."""

    episode_id: str = Field(
        description="The groundstate episode: also readable over REST (`/v1/episodes/{id}`)."
    )
    task_id: str
    domain: str
    system_prompt: str | None = Field(default=None, description="On reset: the domain policy.")
    tools: list[dict[str, Any]] | None = Field(default=None, description=f"On reset: {TOOLS_DESCRIPTION}")
    tool_kinds: dict[str, ToolKind] | None = Field(
        default=None, description=f"On reset: {TOOL_KINDS_DESCRIPTION}"
    )
    user_message: str | None = Field(
        default=None, description="The user's opening line (reset) or reply to the agent's message."
    )
    tool_result: ToolCallResult | None = Field(
        default=None, description="A tool call's output, or its business refusal as `error`."
    )
    error: ErrorBody | None = Field(
        default=None,
        description="The agent's invalid step (unknown tool, invalid arguments, a refused message): nothing "
        "ran; the episode goes on.",
    )
    score: ScoreResult | None = Field(default=None, description="On the final step: checks and state diff.")
    user_done: bool = Field(default=False, description="The simulated user ended the conversation.")


class OpenEnvStep(WireModel):
    """The `data` of an `observation` frame: OpenEnv's `{observation, reward, done}`."""

    observation: OpenEnvObservation
    reward: float | None = Field(
        default=None, description="Set on the final step: 1.0 or 0.0; null there only for a backend error."
    )
    done: bool = False


class OpenEnvState(WireModel):
    """`state()`: the session's episode and progress (never the expected outcome)."""

    episode_id: str | None = None
    step_count: int = 0
    task_id: str | None = None
    domain: str | None = None
    done: bool = False
    reward: float | None = None
