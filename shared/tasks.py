"""The task schema: what a task YAML file holds, and what the catalogue serves.

A task is data, shared by the server (which loads and scores it) and the trainer (which lists and selects
tasks). `Task` is the full file; `TaskPublic` is what an agent-facing catalogue returns (no gold actions).
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Split = Literal["train", "test"]
TaskKind = Literal["action", "analytics"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserSpec(_Strict):
    """The simulated customer: who they are, what they want, and (for the scripted user) what they say."""

    persona: str = Field(description="Who the user is and how they talk.")
    goal: str = Field(description="What the user wants out of the conversation.")
    known_info: dict[str, Any] = Field(
        default_factory=dict, description="Facts the user can give when asked."
    )
    unknown_info: list[str] = Field(default_factory=list, description="Facts the user does not know.")
    instructions: str = Field(default="", description="How the user should behave (what to accept, refuse).")
    script: list[str] = Field(
        min_length=1, description="Lines the scripted user says, in order; the first opens the conversation."
    )


class GoldAction(_Strict):
    """One reference tool call; replaying all of them on the initial state yields the expected state.

    Spelt as OpenAI spells a call, `{name, arguments}`, like `/v1/score`, the reference conversation and
    OpenEnv's step, so a task's gold pastes into any of them. The old spelling `{tool, args}` still loads,
    with a `DeprecationWarning`.
    """

    name: str = Field(description="The tool to call.", examples=["cancel_booking"])
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments.", examples=[{"booking_id": "BK-70412"}]
    )

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
