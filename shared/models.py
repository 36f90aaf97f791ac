"""Wire models of the REST API (`/v1`): what the server returns and what clients send.

Both sides import these; nothing here imports env_server or trainer.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

UserKind = Literal["scripted", "llm"]
ScoreStatus = Literal["scored", "backend_error"]
#: `disposed`: dropped before or after scoring (its sandbox is gone; its events, and score if any, stay).
EpisodeStatus = Literal["active", "finished", "disposed"]
#: `rejected_tool_call`: a call refused before it ran (unknown tool, invalid arguments; nothing changed);
#: `conversation_end`: the simulated user ended the conversation (no text: the end is never a message).
EventKind = Literal[
    "user_message",
    "assistant_message",
    "tool_call",
    "rejected_tool_call",
    "conversation_end",
    "backend_error",
]


class WireModel(BaseModel):
    """Base of every wire model: unknown fields are rejected, so typos fail loudly."""

    model_config = ConfigDict(extra="forbid")


class ErrorBody(WireModel):
    """What went wrong, machine- and human-readable."""

    code: str = Field(description="Stable kebab-case code, e.g. `unknown-task`.", examples=["unknown-task"])
    message: str = Field(description="A sentence naming the bad value and, where useful, the valid ones.")
    field: str | None = Field(default=None, description="The request field at fault, dotted.")


class ErrorResponse(WireModel):
    """Body of every 4xx/5xx response."""

    error: ErrorBody


class DomainSummary(WireModel):
    """A domain in the catalogue."""

    name: str = Field(examples=["hotel"])
    description: str
    tools: int = Field(description="Number of tools.")
    tasks: int = Field(description="Number of loaded tasks (built-in and extra).")


ToolKind = Literal["read", "write"]

#: One fact, declared once: how every surface describes its tool lists.
TOOLS_DESCRIPTION = "The tools exactly in OpenAI's `tools` format (`{type: function, function: {...}}`)."
TOOL_KINDS_DESCRIPTION = (
    "groundstate's mark of each tool, by name: `read` or `write` (an extension beside OpenAI's format)."
)


class DomainDetail(WireModel):
    """A domain with its policy and tool schemas."""

    name: str
    description: str
    policy: str = Field(description="The agent's operating manual (markdown).")
    tools: list[dict[str, Any]] = Field(description=TOOLS_DESCRIPTION)
    tool_kinds: dict[str, ToolKind] = Field(
        default_factory=dict, description=TOOL_KINDS_DESCRIPTION, examples=[{"get_booking": "read"}]
    )


class StartEpisodeRequest(WireModel):
    """Start an episode of a task."""

    task_id: str = Field(examples=["hotel-corp-modify-approval-007"])
    user: UserKind | None = Field(default=None, description="Simulated user; the server default if omitted.")
    seed: int | None = Field(default=None, description="Seed for the LLM user's sampling.")


class EpisodeStarted(WireModel):
    """Everything an agent needs to begin: policy, tools and the user's first message."""

    episode_id: str
    task_id: str
    domain: str
    system_prompt: str = Field(description="The domain policy, to use as the agent's system prompt.")
    tools: list[dict[str, Any]] = Field(description=TOOLS_DESCRIPTION)
    tool_kinds: dict[str, ToolKind] = Field(
        default_factory=dict, description=TOOL_KINDS_DESCRIPTION, examples=[{"get_booking": "read"}]
    )
    first_message: str = Field(description="The simulated user's opening message.")
    user: UserKind
    user_model: str = ""


class ToolCallRequest(WireModel):
    """Call one tool in the episode's sandbox."""

    name: str = Field(examples=["get_booking"])
    arguments: dict[str, Any] = Field(default_factory=dict, examples=[{"booking_id": "BK-10417"}])
    call_id: str | None = Field(default=None, description="The model's tool-call id, echoed back.")


class ToolCallResult(WireModel):
    """A tool's result (`output`) or business refusal (`error`); both are for the agent to read."""

    name: str
    call_id: str | None = None
    output: Any = None
    error: str | None = Field(default=None, description="A business-rule refusal (ToolError) message.")


class MessageRequest(WireModel):
    """An assistant message to the simulated user."""

    content: str = Field(min_length=1, max_length=32_000)


class UserReply(WireModel):
    """The simulated user's answer; `done` means the user ended the conversation."""

    content: str = Field(description='What the user said; "" when the user ended without a word.')
    done: bool = Field(description="The user ended the conversation: tools still run, then score.")


class DiffEntry(WireModel):
    """One difference between the agent's changes and the expected changes."""

    kind: Literal["missing", "wrong", "extra"] = Field(
        description="missing: an expected change was not made; wrong: made with another value; "
        "extra: a change that should not have been made."
    )
    table: str
    key: str = Field(description="Primary key of the row, or `(new row)` for an added row.")
    column: str | None = Field(default=None, description="The column, or null for a whole row.")
    expected: Any = None
    actual: Any = None


class Check(WireModel):
    """One part of the reward: the state check, each communicate item, each rubric question."""

    name: str = Field(examples=["state", "communicate:manager approval", "rubric:1"])
    passed: bool
    detail: str = ""


class StateChange(WireModel):
    """One change the agent made to the task's initial state (what it did, right or wrong)."""

    table: str
    key: str = Field(description="Primary key of the row, or `(new row)` for an added row.")
    column: str | None = Field(
        default=None, description="The column, or null for a whole row added (`after`) or removed (`before`)."
    )
    before: Any = None
    after: Any = None


class ScoreResult(WireModel):
    """The verdict on an episode or trajectory."""

    status: ScoreStatus
    reward: int | None = Field(description="1 or 0; null when status is backend_error.")
    checks: list[Check] = Field(default_factory=list)
    diff: list[DiffEntry] = Field(default_factory=list)
    changes: list[StateChange] = Field(
        default_factory=list,
        description="What the agent changed against the task's initial state, passing or not (volatile "
        "columns left out); `diff` is how that differs from the expected changes.",
    )
    error: str | None = Field(default=None, description="Cause of a backend_error.")
    user_model: str = ""
    user_prompt_version: str = ""
    judge_model: str = Field(default="", description="The judge's model, when rubric questions were asked.")
    judge_prompt_version: str = ""


class EpisodeEvent(WireModel):
    """One persisted event of an episode."""

    seq: int
    kind: EventKind
    payload: dict[str, Any]
    created_at: datetime


class EpisodeInfo(WireModel):
    """An episode's record: events, the state diff so far, and its score once finished."""

    episode_id: str
    task_id: str
    domain: str
    status: EpisodeStatus
    user: UserKind
    events: list[EpisodeEvent]
    diff: list[DiffEntry] = Field(description="Against the expected changes, as scoring would see it now.")
    changes: list[StateChange] = Field(
        default_factory=list, description="What the agent changed so far against the task's initial state."
    )
    score: ScoreResult | None = None


class ToolCallSpec(WireModel):
    """A tool call of a submitted trajectory."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class FunctionCall(WireModel):
    """The function an OpenAI tool call names; `arguments` may be the JSON text OpenAI sends or an object."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc.msg} at character {exc.pos}") from None
        return value


class OpenAIToolCall(WireModel):
    """One entry of an assistant message's `tool_calls`, as the OpenAI chat API writes it."""

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(WireModel):
    """An OpenAI-style chat message of a submitted trajectory; an assistant turn may carry `tool_calls`."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[OpenAIToolCall] | None = Field(
        default=None, description="The calls the assistant made in this turn, after its text (OpenAI format)."
    )


class ScoreRequest(WireModel):
    """A whole trajectory to score statelessly on a fresh sandbox.

    Ordered (preferred): the calls ride in the assistant messages' `tool_calls`, so the scorer sees what
    came before what (the `consent` check and the echo rule of `communicate` need it). Unordered (legacy):
    the calls in the top-level `tool_calls` list; they are read as made before every message, which fails
    the `consent` check wherever the policy wants a yes before a change. Not both at once.
    """

    task_id: str
    tool_calls: list[ToolCallSpec] = Field(
        default_factory=list,
        max_length=2000,
        description="Unordered calls (read as made before every message); prefer `tool_calls` inside "
        "the assistant messages.",
    )
    messages: list[ChatMessage] = Field(default_factory=list, max_length=2000)

    @model_validator(mode="after")
    def _one_place_for_calls(self) -> ScoreRequest:
        if self.tool_calls and any(m.tool_calls for m in self.messages):
            raise ValueError(
                "give the tool calls either inside the assistant messages (ordered) or as the top-level "
                "`tool_calls` list (unordered), not both"
            )
        if len(self.calls()) > 2000:
            raise ValueError("at most 2000 tool calls")
        return self

    def calls(self) -> list[ToolCallSpec]:
        """Every call, in the order given."""
        if self.tool_calls:
            return list(self.tool_calls)
        return [
            ToolCallSpec(name=c.function.name, arguments=c.function.arguments)
            for m in self.messages
            for c in m.tool_calls or ()
        ]


class ReferenceStep(WireModel):
    """One step of a task's reference conversation: an agent message, an agent's call, or the user's line."""

    role: Literal["assistant", "user"]
    content: str | None = Field(default=None, description="The message, or null for a tool call.")
    tool_call: ToolCallSpec | None = Field(default=None, description="The agent's call; null for a message.")


class ReferenceTrajectory(WireModel):
    """A task's canonical policy-following conversation with the scripted user.

    The gold calls, asking for identity, the reference reply or a proposal, the user's yes, the changes,
    the report: what validation requires to score 1; the `replay` oracle plays the agent's side.
    """

    task_id: str
    steps: list[ReferenceStep]


class TrajectoryScore(ScoreResult):
    """A stateless score, with what each replayed tool call returned."""

    tool_results: list[ToolCallResult] = Field(default_factory=list)
    ordered: bool = Field(
        default=True,
        description="Whether the calls came inside the messages (their order known); false for the "
        "top-level `tool_calls` list.",
    )
