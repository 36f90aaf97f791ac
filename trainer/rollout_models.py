"""What a rollout takes and gives: its limits (`RolloutConfig`), why it ended, its event log and its result.

The state machine that produces them is `trainer.rollout`; evaluation, probing, best-of-N and training read
the `RolloutResult` it returns.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from shared.models import ScoreResult, UserKind
from shared.strict_model import StrictModel
from shared.tasks import Split
from trainer.policies.base import Turn
from trainer.results import CheckOutcome, DiffEntry, TrialResult, TrialStatus

__all__ = ["EndReason", "EventKind", "RolloutConfig", "RolloutEvent", "RolloutResult"]


class EndReason(StrEnum):
    """Why the conversation ended."""

    USER_DONE = "user_done"
    """The simulated user ended it."""
    AGENT_STOP = "agent_stop"
    """The policy said it was done (`Turn.stop`)."""
    EMPTY_TURN = "empty_turn"
    """The policy produced neither text nor tool calls."""
    MAX_TURNS = "max_turns"
    """The policy used its turn limit."""
    CONTEXT_OVERFLOW = "context_overflow"
    """The conversation outgrew the model's context."""
    BACKEND_ERROR = "backend_error"
    """The server failed (sandbox, simulated user, judge, scoring)."""
    POLICY_ERROR = "policy_error"
    """The policy's endpoint failed, or the task's first prompt did not fit the model's context: the model
    never played."""
    TIMEOUT = "timeout"
    """The episode exceeded its time budget."""
    INVALID_MESSAGE = "invalid_message"
    """The server refused the policy's message to the user (over its size limit): scored as it stands."""


class RolloutConfig(StrictModel):
    """Limits and options of one rollout."""

    max_turns: int = Field(default=30, ge=1)
    """Policy turns allowed; the episode is scored when they are used up."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget of the whole episode; past it the rollout is a backend error."""
    user: UserKind | None = None
    """The simulated user (`scripted` or `llm`); the server's default if null."""
    seed: int | None = None
    """Seed of the LLM user's sampling."""


EventKind = Literal[
    "episode_started", "policy_turn", "tool_call", "assistant_message", "user_message", "scored", "failed"
]


class RolloutEvent(StrictModel):
    """One thing that happened in the rollout."""

    t: float
    """Seconds since the rollout started."""
    kind: EventKind
    """What happened."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Details: ids, names, arguments, results, tokens, latencies."""


class RolloutResult(StrictModel):
    """A finished rollout: outcome, every turn with its tokens, the transcript and the event log."""

    task_id: str
    """The task's id."""
    domain: str | None = None
    """The task's domain; null when the episode never started."""
    policy: str
    """The policy's name."""
    episode_id: str | None = None
    """The server's episode id; null when the episode never started."""
    status: TrialStatus
    """`scored`, `backend_error` (server or timeout failure) or `policy_error` (the policy's endpoint failed):
    the last two carry no reward."""
    reward: Literal[0, 1] | None = None
    """The server's reward; null exactly for a backend or policy error."""
    end_reason: EndReason
    """Why the conversation ended."""
    error: str | None = None
    """The failure's message, or a note on an agent-side end (turn limit, context overflow, empty turn)."""
    latency_s: float = 0.0
    """Wall-clock seconds from the start of the episode to its score (or failure)."""
    turns: list[Turn] = Field(default_factory=list)
    """Every policy turn, in order, with its tokens (and token ids for token-level policies)."""
    tool_calls: int = 0
    """Tool calls the policy made (including ones that failed to parse or were rejected)."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The conversation in OpenAI chat format, as the policy saw it."""
    events: list[RolloutEvent] = Field(default_factory=list)
    """The event log."""
    score: ScoreResult | None = None
    """The server's verdict; null when the episode was not scored."""

    @property
    def tokens_in(self) -> int:
        """Prompt tokens summed over the turns."""
        return sum(t.tokens_in for t in self.turns)

    @property
    def tokens_out(self) -> int:
        """Generated tokens summed over the turns."""
        return sum(t.tokens_out for t in self.turns)

    def token_ids(self) -> list[int]:
        """The episode's whole token sequence (token-level policies): each turn's context, then its output.

        Raises:
            ValueError: A turn carries no token ids (the policy is not token-level).
        """
        ids: list[int] = []
        for turn in self._token_turns():
            ids += (turn.context_ids or []) + (turn.token_ids or [])
        return ids

    def loss_mask(self) -> list[int]:
        """1 for generated tokens, 0 for prompt, tool and user tokens; aligned with `token_ids()`.

        Raises:
            ValueError: A turn carries no token ids.
        """
        mask: list[int] = []
        for turn in self._token_turns():
            mask += [0] * len(turn.context_ids or []) + [1] * len(turn.token_ids or [])
        return mask

    def _token_turns(self) -> list[Turn]:
        if any(t.token_ids is None or t.context_ids is None for t in self.turns):
            raise ValueError(f"policy {self.policy} is not token-level: its turns carry no token ids")
        return self.turns

    def to_trial(
        self, *, split: Split, trial: int, sample: int = 0, domain: str | None = None
    ) -> TrialResult:
        """The rollout as one line of `results.jsonl`.

        Args:
            split: The task's split.
            trial: The trial index.
            sample: 0, or the candidate index of a best-of-N trial.
            domain: The task's domain, needed when the episode never started.

        Raises:
            ValueError: The domain is unknown.
        """
        domain = self.domain or domain
        if not domain:
            raise ValueError(f"rollout of {self.task_id} never started: pass its domain")
        score = self.score
        return TrialResult(
            task_id=self.task_id,
            domain=domain,
            split=split,
            trial=trial,
            sample=sample,
            policy=self.policy,
            status=self.status,
            reward=self.reward,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            turns=len(self.turns),
            tool_calls=self.tool_calls,
            latency_s=round(self.latency_s, 3),
            error=self.error,
            episode_id=self.episode_id,
            diff=[DiffEntry(kind=d.kind, table=d.table, key=d.key, column=d.column) for d in score.diff]
            if score
            else [],
            failed_checks=[
                CheckOutcome(name=c.name, passed=c.passed, detail=c.detail)
                for c in score.checks
                if not c.passed
            ]
            if score
            else [],
            grading=score.grading if score else None,
        )
