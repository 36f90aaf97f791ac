"""The policy seam: `Policy.respond(messages, tools) -> Turn`, and what a turn holds.

A policy is whatever produces the agent's next assistant turn from the conversation so far: a chat model
behind an OpenAI-compatible endpoint, a local transformers model, or a deterministic script. The rollout
(`trainer.rollout`) keeps the conversation in the OpenAI chat format and calls `respond` once per turn.

    PolicyError                   the policy could not produce a turn (endpoint down, model failure):
    └── ContextOverflowError      an infrastructure failure, so the rollout becomes a backend error...
                                  ...except a context overflow, which ends the conversation (agent's limit)
    PolicySpecError               a `--policy` spec that names no valid configuration
"""

from __future__ import annotations

import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, Field, ValidationError

from shared.strict_model import StrictModel

if TYPE_CHECKING:
    from shared.client import AsyncGroundstateClient
    from shared.models import EpisodeStarted

__all__ = [
    "STOP_MARK",
    "ContextOverflowError",
    "Message",
    "Policy",
    "PolicyError",
    "PolicySpecError",
    "ToolCall",
    "Turn",
    "new_call_id",
    "openai_tools",
    "parse_options",
    "split_stop",
]

Message = dict[str, Any]
"""One OpenAI-format chat message: `{"role": "system"|"user"|"assistant"|"tool", "content": ...}`, plus
`tool_calls` on assistant messages and `tool_call_id` on tool messages."""

STOP_MARK = "###STOP###"
"""Text a model may end its message with to end the conversation itself (removed before the user sees it)."""


class PolicyError(RuntimeError):
    """The policy could not produce a turn (endpoint unreachable, HTTP error, model failure).

    The rollout records a backend error: a failing policy endpoint says nothing about the agent's skill.
    """


class ContextOverflowError(PolicyError):
    """The conversation no longer fits the model's context; the rollout ends it and scores what was done."""


class PolicySpecError(ValueError):
    """A policy spec or option that cannot configure a policy; the message names the valid choices."""


class ToolCall(StrictModel):
    """One tool call the model asked for."""

    id: str
    """The call's id, echoed in the tool message that carries its result (`tool_call_id`)."""
    name: str
    """The tool's name as the model wrote it (it may not exist: the server then says so)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """The parsed JSON arguments."""
    parse_error: str | None = None
    """Why the call could not be parsed (bad JSON, no name); the rollout returns this to the model as the
    call's result instead of calling the server."""


class Turn(StrictModel):
    """One assistant turn: text and/or tool calls, its cost, and (token-level policies) its exact tokens.

    Token semantics (token-level policies only, else null): the episode's token sequence is the
    concatenation over turns of `context_ids + token_ids`; `context_ids` (system prompt, tool schemas, user
    messages, tool results, chat-template markup) are never trained on (loss mask 0) and `token_ids` are
    exactly what the model sampled (loss mask 1), never re-tokenized from text.
    """

    content: str = ""
    """The assistant's text with tool-call markup and the stop mark removed; sent to the user when the turn
    has no tool calls."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Tool calls to run, in order."""
    stop: bool = False
    """The policy ends the conversation after this turn (the model wrote `###STOP###`, or a scripted policy
    has nothing left to do)."""
    finish_reason: str | None = None
    """Why generation stopped, as the backend said (`stop`, `tool_calls`, `length`); null if unknown."""
    tokens_in: int = Field(default=0, ge=0)
    """Prompt tokens consumed by this turn (the whole context the model read)."""
    tokens_out: int = Field(default=0, ge=0)
    """Tokens generated in this turn."""
    context_ids: list[int] | None = None
    """Tokens appended to the episode's token sequence before this turn's generation (loss mask 0); the first
    turn's hold the whole initial prompt."""
    token_ids: list[int] | None = None
    """The exact generated token ids (loss mask 1), including the end-of-turn token when one was sampled."""
    logprobs: list[float] | None = None
    """Log-probability of each generated token under the model's raw distribution (before temperature and
    top-p), one per entry of `token_ids`."""

    def message(self) -> Message:
        """The turn as an OpenAI assistant message, to append to the conversation."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in self.tool_calls
            ]
        return message


class Policy(ABC):
    """Produces the agent's next turn. One instance may serve many concurrent episodes.

    A policy that needs per-episode state (a token-level transcript, the task's gold actions) overrides
    `for_episode` and returns a fresh instance bound to that episode; the rollout always calls it first.
    """

    name: str = "policy"
    """How results name the policy (`TrialResult.policy`)."""

    @abstractmethod
    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """The next assistant turn.

        Args:
            messages: The conversation so far in OpenAI chat format, starting with the system prompt.
            tools: The episode's tools as OpenAI `tools` entries (each may carry our extra `kind` key; see
                `openai_tools`).

        Returns:
            The turn.

        Raises:
            PolicyError: No turn could be produced (the rollout records a backend error).
        """

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        """The policy to use for one episode; stateless policies return themselves.

        Args:
            episode: The started episode (task, system prompt, tools, first message).
            client: The server client, for policies that need more of the task.
        """
        return self

    async def context_window(self) -> int | None:
        """The tokens the model can hold (prompt and reply), when its endpoint says; None when unknown.

        A campaign checks every domain's first prompt against it before it starts (`trainer.evaluate`).
        """
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections or models held by the policy (called once, when a campaign ends)."""

    @classmethod
    def from_spec(cls, target: str, options: Mapping[str, str]) -> Self:
        """Build the policy from the parts of a spec `KIND:TARGET?key=value&...`.

        Args:
            target: The part after `KIND:` (a model, a path; may be empty).
            options: The query options, as strings (validated by the policy).

        Raises:
            PolicySpecError: The target or an option is invalid.
        """
        raise PolicySpecError(f"{cls.__name__} cannot be built from a spec")


def parse_options(model: type[BaseModel], values: Mapping[str, Any], spec_kind: str) -> Any:
    """Validate spec options against a pydantic model, turning errors into `PolicySpecError`."""
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        fields = ", ".join(model.model_fields)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'spec'}: {e['msg']}" for e in exc.errors()
        )
        raise PolicySpecError(f"invalid {spec_kind} policy options ({problems}); options: {fields}") from None


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools as strict OpenAI `tools` entries: only `type` and `function` (our `kind` key dropped)."""
    return [{"type": t.get("type", "function"), "function": t["function"]} for t in tools]


def split_stop(text: str) -> tuple[str, bool]:
    """Remove the stop mark from a model's text; returns the cleaned text and whether the mark was there."""
    if STOP_MARK not in text:
        return text, False
    return text.replace(STOP_MARK, "").strip(), True


def new_call_id() -> str:
    """A fresh tool-call id for calls whose backend gave none (text-parsed calls, scripted policies)."""
    return f"call_{uuid.uuid4().hex[:16]}"
