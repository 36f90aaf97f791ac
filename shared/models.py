"""Wire models of the REST API (`/v1`): what the server returns and what clients send.

Both sides import these; nothing here imports env_server or trainer.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.tasks import TaskPublic
from shared.text import RequestModel

UserKind = Literal["scripted", "llm"]
ScoreStatus = Literal["scored", "backend_error"]
#: `disposed`: dropped before or after scoring (its sandbox is gone; its events, and score if any, stay).
EpisodeStatus = Literal["active", "finished", "disposed", "reclaimed"]
#: `rejected_tool_call`: a call refused before it ran (unknown tool, invalid arguments; nothing changed);
#: `conversation_end`: the simulated user ended the conversation (no text: the end is never a message);
#: `user_tool_call`: the simulated customer acted on their own side (a user tool, dual-control domains).
EventKind = Literal[
    "user_message",
    "assistant_message",
    "tool_call",
    "rejected_tool_call",
    "user_tool_call",
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
    benchmark: bool = Field(
        default=True,
        description="Part of the benchmark; false for a curriculum (`starter`), which headline figures "
        "(`eval`'s default domains, the viewer's totals) leave out unless it is named.",
    )


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
    families: list[str] = Field(
        default_factory=list,
        description="Scenario families that `tasks generate` and `POST /v1/tasks/mint` draw from.",
        examples=[["cancel-refund-by-tier"]],
    )


class StartEpisodeRequest(RequestModel):
    """Start an episode of a task."""

    identifiers = frozenset({"task_id"})

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


class ToolCallRequest(RequestModel):
    """Call one tool in the episode's sandbox."""

    identifiers = frozenset({"name", "call_id", "idempotency_key"})

    name: str = Field(examples=["get_booking"])
    arguments: dict[str, Any] = Field(default_factory=dict, examples=[{"booking_id": "BK-10417"}])
    call_id: str | None = Field(default=None, description="The model's tool-call id, echoed back.")
    idempotency_key: str | None = Field(
        default=None,
        max_length=256,
        description="A key unique to this call within the episode (a UUID): a call resent with a key "
        "already used returns the first call's result without running again, on any replica.",
        examples=["5f0c6e0a-2b1d-4f7e-9a53-0d6c1f7b2e44"],
    )


class ToolCallResult(WireModel):
    """A tool's result (`output`) or business refusal (`error`); both are for the agent to read."""

    name: str
    call_id: str | None = None
    output: Any = None
    error: str | None = Field(default=None, description="A business-rule refusal (ToolError) message.")


class MessageRequest(RequestModel):
    """An assistant message to the simulated user."""

    content: str = Field(min_length=1, max_length=32_000)


class UserReply(WireModel):
    """The simulated user's answer; `done` means the user ended the conversation."""

    content: str = Field(description='What the user said; "" when the user ended without a word.')
    done: bool = Field(description="The user ended the conversation: tools still run, then score.")


#: The side of the conversation a table is on: the business the agent works in, or the customer's own
#: devices, apps and equipment (a dual-control domain's user tables, changed only through the customer).
Side = Literal["agent", "user"]


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
    side: Side = Field(
        default="agent",
        description="`user` when the table is on the customer's side (their device or app, changed only by "
        "the customer's own actions in a dual-control task), else `agent`.",
    )


class Check(WireModel):
    """One part of the reward: the state check, each communicate item, each rubric question."""

    name: str = Field(examples=["state", "communicate:manager approval", "rubric:1"])
    passed: bool
    detail: str = ""


class GradingVersion(WireModel):
    """What a score was graded against; two scores compare only when their grading versions agree.

    A task corrected after a run, a scorer rule added, or another judge would change a reward without the
    agent doing anything differently: metrics refuse to pool scores of different grading versions, and
    `groundstate regrade` names which part moved.
    """

    task_fingerprint: str = Field(
        description="Hash of the task's content (gold, patch, questions): `Task.fingerprint`.",
        examples=["3f9c2a7d1e0b4c88"],
    )
    domain_fingerprint: str = Field(
        description="Hash of the domain's tables and seeded rows: the initial state the task builds on.",
        examples=["a41be0c95d2f7713"],
    )
    scorer_version: str = Field(
        description="The scoring rules' version (`env_server.scoring.scorer.SCORER_VERSION`), bumped "
        "when a rule changes.",
        examples=["scorer-v1"],
    )
    judge_model: str = Field(
        default="", description="The rubric judge's model; empty when the task has no rubric question."
    )
    judge_prompt_version: str = Field(default="", description="The judge prompt's version; empty likewise.")


ChangeLabel = Literal["needed", "wrong", "collateral", "undone"]
CreditLabel = Literal["needed", "wrong", "collateral", "undone", "no-effect"]


class RowChange(WireModel):
    """One change a tool call made: a row added or removed, or one column of a row updated."""

    table: str = Field(examples=["bookings"])
    key: str = Field(
        description="The row's primary key as text; for a new row the id the episode generated.",
        examples=["BK-20417", "TR-90001"],
    )
    op: Literal["added", "updated", "removed"]
    column: str | None = Field(default=None, description="The updated column; null for a whole row.")
    before: Any = Field(default=None, description="The column's (or row's) value before the call.")
    after: Any = Field(default=None, description="The column's (or row's) value after the call.")
    label: ChangeLabel = Field(
        description="needed: part of the expected outcome with the expected value; wrong: the right row or "
        "column with another value; collateral: a change the task does not want; undone: overwritten by a "
        "later call, or put back to its initial value."
    )


class CallCredit(WireModel):
    """What one tool call of the episode did to the expected outcome."""

    index: int = Field(ge=0, description="The call's position among the episode's tool calls, from 0.")
    name: str = Field(examples=["modify_booking"])
    label: CreditLabel = Field(
        description="The worst label of its changes (wrong, collateral, needed, undone); no-effect when it "
        "changed nothing (a read, a refused call, a write of the same values)."
    )
    changes: list[RowChange] = Field(default_factory=list)


class Deviation(WireModel):
    """Where a failed episode first went wrong for good."""

    kind: Literal["call", "missing", "check"] = Field(
        description="call: the first call after which the expected outcome could no longer be reached "
        "without undoing a change the agent never undid; missing: nothing went off course but the episode "
        "stopped without an expected change; check: the state was right and another check failed."
    )
    call_index: int | None = Field(
        default=None,
        description="The call (its `index`): the deviating call, the write made before the user's yes "
        "(consent) or the last `submit_answer` (answer); null otherwise.",
    )
    check: str | None = Field(default=None, description="The failed check, for kind `check`.")
    reason: str = Field(description="What went wrong, in words.")


class Credit(WireModel):
    """Per-call credit: which call made which change, and how each change relates to the expected outcome.

    A diagnostic: it never changes the reward.
    """

    version: Literal["credit-v1"] = Field(
        default="credit-v1", description="The credit format and rules; a change of either bumps it."
    )
    calls: list[CallCredit] = Field(description="Every tool call of the episode, in order.")
    first_deviation: Deviation | None = Field(
        default=None, description="Where a failed episode first went wrong for good; null for a success."
    )


class StateChange(WireModel):
    """One change the agent made to the task's initial state (what it did, right or wrong)."""

    table: str
    key: str = Field(description="Primary key of the row, or `(new row)` for an added row.")
    column: str | None = Field(
        default=None, description="The column, or null for a whole row added (`after`) or removed (`before`)."
    )
    before: Any = None
    after: Any = None
    side: Side = Field(
        default="agent", description="`user` for a table on the customer's side, else `agent`."
    )


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
    grading: GradingVersion | None = Field(
        default=None,
        description="What the score was graded against (task, domain, scorer, judge); null for a "
        "backend_error and for scores stored before grading versions existed.",
    )
    credit: Credit | None = Field(
        default=None,
        description="Per-call credit (a diagnostic, versioned); null for a backend_error and for scores "
        "stored before it existed.",
    )
    diagnostics_error: str | None = Field(
        default=None,
        description="Why a diagnostic (per-call credit) is missing from a scored result: it failed after "
        "the reward was computed, and never voids it.",
    )


class BlameResult(WireModel):
    """Whose fault a failed episode played with the LLM user is: the agent's or the simulated user's.

    Decided by replaying the agent's turns against the scripted user and by reading the user's mistakes off
    its transcript (docs/diagnostics.md).
    """

    episode_id: str
    task_id: str
    verdict: Literal["agent", "user", "undecided", "not-blamed"] = Field(
        description="agent: its own calls or messages lose the reward; user: the simulated user's words or "
        "mistakes do; undecided: evidence both ways; not-blamed: a success, a backend error, a scripted user."
    )
    reason: str = Field(description="The deciding evidence, in words.")
    user_evidence: list[str] = Field(default_factory=list, description="The simulated user's mistakes.")
    agent_evidence: list[str] = Field(default_factory=list, description="The agent's own deviations.")
    scripted_reward: int | None = Field(
        default=None, description="The reward of the agent's turns with the scripted user's lines."
    )


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


class ToolCallSpec(RequestModel):
    """A tool call of a submitted trajectory."""

    identifiers = frozenset({"name"})

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class FunctionCall(RequestModel):
    """The function an OpenAI tool call names; `arguments` may be the JSON text OpenAI sends or an object."""

    identifiers = frozenset({"name"})

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
            except RecursionError:
                raise ValueError("not JSON this server reads: nested too deeply") from None
        return value


class OpenAIToolCall(RequestModel):
    """One entry of an assistant message's `tool_calls`, as the OpenAI chat API writes it."""

    identifiers = frozenset({"id"})

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(RequestModel):
    """An OpenAI-style chat message of a submitted trajectory; an assistant turn may carry `tool_calls`.

    In a dual-control domain a user turn may carry them too: the customer's own calls (the domain's user
    tools, e.g. telecom's `restart_router`), made before they said the turn's text, as τ²-bench records a
    simulated user's actions. Only assistant and user turns carry calls.
    """

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[OpenAIToolCall] | None = Field(
        default=None,
        description="The calls the assistant made in this turn, after its text; on a user turn of a "
        "dual-control task, the customer's own calls on their side (OpenAI format).",
    )

    def calls(self) -> list[ToolCallSpec]:
        """This turn's calls as `{name, arguments}`."""
        return [
            ToolCallSpec(name=c.function.name, arguments=c.function.arguments) for c in self.tool_calls or ()
        ]

    @model_validator(mode="after")
    def _calls_on_speaking_turns(self) -> ChatMessage:
        if self.tool_calls and self.role not in ("assistant", "user"):
            raise ValueError(
                f"a {self.role} message carries no tool_calls (only assistant and user turns do)"
            )
        return self


MAX_MINT = 32
"""Tasks one mint request may ask for: each is generated and fully validated (a second or so) in the call."""


class MintRequest(RequestModel):
    """Fresh train tasks for a running training, drawn from a domain's scenario families."""

    identifiers = frozenset({"domain"})

    domain: str = Field(examples=["hotel"])
    families: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="The families to draw from, in turn (default: every family of the domain).",
    )
    n: int = Field(ge=1, le=MAX_MINT, description="How many valid tasks to return.")
    seed: int = Field(default=0, ge=0, le=2**31 - 1, description="Seeds the draws with each draw's index.")


class MintDiscard(WireModel):
    """A draw that did not become a task, and why (its family could not build it, or validation failed)."""

    family: str
    reason: str


class MintResult(WireModel):
    """The minted tasks (served from now on by every worker) and the draws discarded on the way."""

    tasks: list[TaskPublic]
    discarded: list[MintDiscard] = Field(default_factory=list)


class ScoreRequest(RequestModel):
    """A whole trajectory to score statelessly on a fresh sandbox.

    Ordered (preferred): the calls ride in the assistant messages' `tool_calls`, so the scorer sees what
    came before what (the `consent` check and the echo rule of `communicate` need it). Unordered (legacy):
    the calls in the top-level `tool_calls` list; they are read as made before every message, which fails
    the `consent` check wherever the policy wants a yes before a change. Not both at once.
    """

    identifiers = frozenset({"task_id"})

    task_id: str
    tool_calls: list[ToolCallSpec] = Field(
        default_factory=list,
        max_length=2000,
        description="Unordered calls (read as made before every message); prefer `tool_calls` inside "
        "the assistant messages.",
    )
    messages: list[ChatMessage] = Field(default_factory=list, max_length=2000)
    customer: Literal["scripted", "own"] | None = Field(
        default=None,
        description="Who plays the customer. `scripted` (the default): the task's scripted customer, whose "
        "turns are said again from the agent's messages exactly as a live episode would (the user turns "
        "given are not read); `own`: the evaluator's own customer, whose turns are kept and whose calls "
        "(`tool_calls` on a user turn) count only where the agent's message before asked for that one "
        "action. A user turn carrying `tool_calls` implies `own`.",
    )

    @model_validator(mode="after")
    def _one_place_for_calls(self) -> ScoreRequest:
        if self.tool_calls and any(m.tool_calls for m in self.messages if m.role == "assistant"):
            raise ValueError(
                "give the tool calls either inside the assistant messages (ordered) or as the top-level "
                "`tool_calls` list (unordered), not both"
            )
        if len(self.calls()) > 2000:
            raise ValueError("at most 2000 tool calls")
        return self

    def own_customer(self) -> bool:
        """Whether the evaluator plays the customer (`customer`, else a user turn carrying calls)."""
        if self.customer is not None:
            return self.customer == "own"
        return any(m.role == "user" and m.tool_calls for m in self.messages)

    def calls(self) -> list[ToolCallSpec]:
        """Every call of the agent, in the order given (the customer's calls ride in user turns)."""
        if self.tool_calls:
            return list(self.tool_calls)
        return [call for m in self.messages if m.role == "assistant" for call in m.calls()]


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
