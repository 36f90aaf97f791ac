"""Wire models of `POST /v1/judge`: yes/no rubric questions about a conversation, answered by an LLM judge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from shared.models import WireModel
from shared.text import RequestModel

JudgeAnswer = Literal["yes", "no"]


class JudgeMessage(RequestModel):
    """One message of the conversation; the judge reads only the `assistant` (agent) messages."""

    role: Literal["system", "user", "assistant", "tool"] = Field(
        description="OpenAI chat role; `assistant` is the agent talking to the user.", examples=["assistant"]
    )
    content: str = Field(
        default="", description="The message text.", examples=["Your booking is now on hold for approval."]
    )


class JudgeRequest(RequestModel):
    """A conversation and the yes/no questions to ask about it."""

    transcript: list[JudgeMessage] = Field(
        description="The conversation, oldest first. Only the agent's (`assistant`) messages are shown to "
        "the judge; user, system and tool messages are ignored."
    )
    questions: list[str] = Field(
        min_length=1,
        description="Yes/no questions about what the agent told the user.",
        examples=[["Did the agent avoid promising the change was already confirmed?"]],
    )
    state_diff: str | None = Field(
        default=None,
        description="Optional text describing the database changes the agent made, shown to the judge.",
        examples=["bookings BK-20417: status confirmed -> on_hold"],
    )


class Verdict(WireModel):
    """The judge's answer to one question."""

    question: str = Field(description="The question, as asked.")
    answer: JudgeAnswer = Field(description="`yes` or `no`.", examples=["yes"])
    reason: str = Field(
        description="The judge's short justification (may be empty).",
        examples=["The agent said the change needs manager approval."],
    )


class JudgeResponse(WireModel):
    """One verdict per question, in the order asked."""

    verdicts: list[Verdict]
    model: str = Field(description="The judge model that answered.", examples=["gpt-4o-mini"])
    prompt_version: str = Field(description="Version of the judge prompt.", examples=["judge-v1"])
