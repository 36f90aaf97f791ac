"""The task schema: what a task YAML file holds, and what the catalogue serves.

A task is data, shared by the server (which loads and scores it) and the trainer (which lists and selects
tasks). `Task` is the full file; `TaskPublic` is what an agent-facing catalogue returns (no gold actions).
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

Split = Literal["train", "test"]
TaskKind = Literal["action", "analytics"]
#: Who makes a call: the agent (its tools) or the simulated customer (the domain's user tools, on their side).
Actor = Literal["agent", "user"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserAction(_Strict):
    """A call the scripted customer makes on their own side (a user tool) when they speak their line."""

    name: str = Field(description="The user tool to call.", examples=["restart_router"])
    arguments: dict[str, Any] = Field(default_factory=dict, description="The user tool's arguments.")


class ScriptLine(_Strict):
    """A script line that does something as well as saying it: the customer acts, then speaks.

    A plain string is a line that only talks; this form is for dual-control tasks, where the agent has the
    customer restart a router or toggle a setting, and the customer does it when the agent has asked.
    """

    say: str = Field(min_length=1, description="What the customer says.")
    actions: list[UserAction] = Field(
        default_factory=list, description="User-tool calls the customer makes before saying `say`, in order."
    )
    when_told: list[str] = Field(
        default_factory=list,
        description="Terms the agent's message this line answers must say (e.g. the setting and its value, "
        "`[airplane]`) for the customer to act; otherwise the customer neither acts nor says `say`, but asks "
        "what to do. Empty: the customer acts whenever they reach the line.",
    )

    @model_validator(mode="after")
    def _told_only_to_act(self) -> ScriptLine:
        """`when_told` gates actions: a line without any has nothing to gate."""
        if self.when_told and not self.actions:
            raise ValueError("when_told: only a line with actions waits to be told; add actions or drop it")
        return self

    @model_serializer(mode="wrap")
    def _plain_when_only_words(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A line without actions dumps as its string, so it reads back (and hashes) like one."""
        return self.say if not self.actions else handler(self)


class UserSpec(_Strict):
    """The simulated customer: who they are, what they want, and (for the scripted user) what they say."""

    persona: str = Field(description="Who the user is and how they talk.")
    goal: str = Field(description="What the user wants out of the conversation.")
    known_info: dict[str, Any] = Field(
        default_factory=dict, description="Facts the user can give when asked."
    )
    unknown_info: list[str] = Field(default_factory=list, description="Facts the user does not know.")
    instructions: str = Field(default="", description="How the user should behave (what to accept, refuse).")
    script: list[str | ScriptLine] = Field(
        min_length=1,
        description="Lines the scripted user says, in order; the first opens the conversation. A line is a "
        "string, or `{say, actions}` for a customer who also does something on their side when they say it "
        "(a user tool call such as restarting their router); the opening line only talks.",
    )

    @model_validator(mode="after")
    def _opening_only_talks(self) -> UserSpec:
        """The customer acts when the agent has asked, so the opening (asked by nobody) carries no actions."""
        first = self.script[0]
        if isinstance(first, ScriptLine) and first.actions:
            raise ValueError("script.0.actions: the opening line only talks; act on a later line")
        return self

    @property
    def lines(self) -> list[str]:
        """What the customer says, line by line (a `{say, actions}` line's words)."""
        return [line if isinstance(line, str) else line.say for line in self.script]

    def actions_at(self, index: int) -> list[UserAction]:
        """The user-tool calls the customer makes with line `index` (none for a plain line)."""
        line = self.script[index]
        return [] if isinstance(line, str) else list(line.actions)

    def user_actions(self) -> list[UserAction]:
        """Every user-tool call the script makes, in the order the lines are said."""
        return [a for i in range(len(self.script)) for a in self.actions_at(i)]


class GoldAction(_Strict):
    """One reference tool call; replaying all of them on the initial state yields the expected state.

    Most are the agent's; in a dual-control task some are the customer's (`actor: user`), made with the
    user tools on their own side, so the expected state may need a change only the customer can make.

    Spelt as OpenAI spells a call, `{name, arguments}`, like `/v1/score`, the reference conversation and
    OpenEnv's step, so a task's gold pastes into any of them. The old spelling `{tool, args}` still loads,
    with a `DeprecationWarning`.
    """

    name: str = Field(description="The tool to call.", examples=["cancel_booking"])
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments.", examples=[{"booking_id": "BK-70412"}]
    )
    actor: Actor = Field(
        default="agent",
        description="Who makes the call: `agent` (an agent tool), or `user` (a user tool the customer runs "
        "on their own side, as their script line says, in a dual-control task).",
    )

    @model_serializer(mode="wrap")
    def _agent_is_implicit(self, handler: SerializerFunctionWrapHandler) -> Any:
        """An agent's call dumps without `actor`, as before actors existed (same files, same hashes)."""
        data = handler(self)
        if isinstance(data, dict) and self.actor == "agent":
            data.pop("actor", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        """Read `{tool, args}` (the spelling before OpenAI's) as `{name, arguments}`, and say it is old."""
        if isinstance(data, dict) and ("tool" in data or "args" in data):
            old = {"tool": "name", "args": "arguments"}
            clash = [k for k in old if k in data and old[k] in data]
            if clash:
                raise ValueError(f"give {old[clash[0]]!r} or the deprecated {clash[0]!r}, not both")
            warnings.warn(
                "a gold action spelt {tool, args} is deprecated: write {name, arguments}",
                DeprecationWarning,
                stacklevel=2,
            )
            return {old.get(k, k): v for k, v in data.items()}
        return data


class AnalyticsSpec(_Strict):
    """The verifiable answer of an `analytics` task: the gold SQL whose result rows the answer must match."""

    gold_sql: str = Field(description="A SELECT statement over the domain tables; its rows are the answer.")
    tolerance: float = Field(
        default=0.0,
        ge=0,
        le=0.05,
        description="Relative tolerance for numeric cells that are not whole numbers (a computed ratio or "
        "average); whole numbers (counts, ids, integer amounts) always compare exactly. 0: exact.",
    )


class ReferenceReply(_Strict):
    """What a good agent tells the user: the message that carries the task's `communicate` facts.

    Validation plays it in the canonical policy-following conversation (the reads, the identity check, a
    proposal, the user's yes, the writes, a report) and requires it, and each paraphrase, to earn every item.
    """

    text: str = Field(min_length=1, description="The reference reply, in a good agent's words.")
    paraphrases: list[str] = Field(
        min_length=1, description="The same facts told in other words; each must earn every item too."
    )
    after_writes: bool = Field(
        default=False,
        description="Said in the report after the gold's writes (a ticket number, a payout); otherwise where "
        "the agent answers or proposes, before any write (a quote, a fee, a refusal).",
    )


class Task(_Strict):
    """A task file, as written by a benchmark author."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Unique id, also the file name.")
    domain: str = Field(description="The domain whose database and tools the task uses.")
    split: Split = Field(description="`test` (the benchmark) or `train`; generated tasks are always `train`.")
    kind: TaskKind = Field(
        default="action",
        description="`action`: a workflow scored by the database state it leaves; `analytics`: a read-only "
        "question scored by the rows of its answer.",
    )
    difficulty_tags: list[str] = Field(default_factory=list, description="Labels for browsing and reports.")
    description: str = Field(default="", description="One line for the catalogue: what the task tests.")
    user: UserSpec = Field(description="The simulated customer.")
    initial_patch: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="Rows added or overwritten (by primary key) on top of the seed."
    )
    gold_actions: list[GoldAction] = Field(
        default_factory=list, description="The reference tool calls; their final state is the expected state."
    )
    wrong_actions: list[GoldAction] = Field(
        default_factory=list,
        description="A plausible wrong trajectory (e.g. doing what the user asked against policy) that must "
        "score 0; required when the gold actions change nothing, so validation can prove the check bites.",
    )
    communicate: list[str] = Field(default_factory=list, description="Facts the agent must tell the user.")
    reference_reply: ReferenceReply | None = Field(
        default=None,
        description="What a good agent says to tell the `communicate` facts; required when there are any.",
    )
    rubric: list[str] = Field(default_factory=list, description="Yes/no questions for the LLM judge.")
    analytics: AnalyticsSpec | None = Field(
        default=None, description="The verifiable answer of an `analytics` task: its gold SQL and tolerance."
    )
    determined_by: dict[str, str] = Field(
        default_factory=dict,
        description='"table.column" -> what fixes the gold\'s value of that column (a policy rule or a fact '
        'the user gives), e.g. {"tickets.priority": "policy 15.1: a complaint ticket is priority high"}. '
        "Validation requires it for every column whose value an agent could plausibly choose otherwise; "
        '"table.*" says what fixes whether a row of that table exists at all.',
    )
    ignore_columns: list[str] = Field(
        default_factory=list,
        description='"table.column" entries the state comparison skips for this task: values that neither '
        "the policy nor the user fixes (e.g. an optional link the gold happens to set).",
    )

    @property
    def fingerprint(self) -> str:
        """A hash of the task's content: two tasks with one id but another gold, patch or question differ.

        Computed on each call: a copy of a task must not carry its original's hash.
        """
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    def public(self) -> TaskPublic:
        """The agent-safe view: everything but the gold actions and the gold SQL."""
        return TaskPublic(
            id=self.id,
            domain=self.domain,
            split=self.split,
            kind=self.kind,
            difficulty_tags=self.difficulty_tags,
            description=self.description,
            user=self.user,
            has_communicate=bool(self.communicate),
            has_rubric=bool(self.rubric),
        )


class TaskPublic(_Strict):
    """A catalogue entry without the reference solution."""

    id: str
    domain: str
    split: Split
    kind: TaskKind
    difficulty_tags: list[str]
    description: str
    user: UserSpec
    has_communicate: bool
    has_rubric: bool
