"""`LLMJudge`: answers yes/no rubric questions about what the agent told the user, one request each."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from env_server.judge._prompt import (
    PROMPT_VERSION,
    build_messages,
    parse_verdict,
    response_formats,
)
from env_server.llm.endpoint import ChatEndpoint, LLMEndpoint, RequestRejected
from env_server.scoring.communicate import agent_messages
from shared.judge import JudgeMessage, Verdict

#: How to ask for JSON: `auto` tries `json_schema`, then `json_object`, then plain text, keeping the first
#: form the endpoint accepts; the others force one form.
ResponseFormatMode = Literal["auto", "json_schema", "json_object", "none"]

_FALLBACK_ORDER: tuple[ResponseFormatMode, ...] = ("json_schema", "json_object", "none")
#: Statuses with which an endpoint refuses a `response_format` it does not know.
_FORMAT_REFUSED = frozenset({400, 422})


def _refuses_format(exc: RequestRejected) -> bool:
    """Whether a rejection may be about `response_format` (llama-cpp-python answers 500 naming the field)."""
    return exc.status in _FORMAT_REFUSED or "response_format" in exc.message


class LLMJudge:
    """An LLM judge over any OpenAI-compatible endpoint; always samples at temperature 0.

    It sees only the agent's messages to the user (never the user's lines, tool calls or tool outputs) and,
    optionally, the final state diff. A question it cannot get a yes/no for after the endpoint's retries
    raises `BackendError`: an infrastructure failure is never scored as a "no".
    """

    prompt_version = PROMPT_VERSION

    def __init__(self, endpoint: LLMEndpoint, *, response_format: ResponseFormatMode = "auto") -> None:
        """Configure the judge (no request is made yet).

        Args:
            endpoint: the chat endpoint; its temperature is ignored (the judge uses 0).
            response_format: how to request JSON output (see `ResponseFormatMode`).
        """
        self.endpoint = endpoint
        self.model = endpoint.model
        self._chat = ChatEndpoint(endpoint, purpose="judge")
        self._formats = response_formats()
        self._auto = response_format == "auto"
        self._mode: ResponseFormatMode = "json_schema" if self._auto else response_format
        self._lock = threading.Lock()

    @property
    def response_format(self) -> ResponseFormatMode:
        """The JSON form currently requested: `json_schema`, `json_object` or `none` (plain text)."""
        return self._mode

    def ask(
        self,
        transcript: Sequence[Mapping[str, Any] | JudgeMessage],
        questions: Sequence[str],
        state_diff: str | None = None,
    ) -> list[Verdict]:
        """Answer each question about the agent's side of the conversation.

        Args:
            transcript: the conversation as `{role, content}` mappings or `JudgeMessage`s; only the
                non-empty `assistant` messages are shown to the judge.
            questions: yes/no questions, answered one request each.
            state_diff: the database changes the agent made, as text, if the judge should see them.

        Returns:
            One verdict per question, in order.

        Raises:
            BackendError: the endpoint failed or gave no readable yes/no after its retries.
        """
        said = agent_messages(transcript)
        return [self._ask_one(said, q, state_diff) for q in questions]

    def close(self) -> None:
        """Close the endpoint's HTTP connections."""
        self._chat.close()

    def _ask_one(self, said: list[str], question: str, state_diff: str | None) -> Verdict:
        messages = build_messages(said, question, state_diff)
        while True:
            mode = self._mode
            try:
                answer, reason = self._chat.complete(
                    messages, parse_verdict, temperature=0.0, response_format=self._formats.get(mode)
                )
            except RequestRejected as exc:
                if not (self._auto and mode != "none" and _refuses_format(exc)):
                    raise
                self._downgrade(mode)
                continue
            return Verdict(question=question, answer=answer, reason=reason)

    def _downgrade(self, refused: ResponseFormatMode) -> None:
        """Stop asking for the `refused` JSON form; the next form in `_FALLBACK_ORDER` is used from now on."""
        with self._lock:
            if self._mode == refused:
                self._mode = _FALLBACK_ORDER[_FALLBACK_ORDER.index(refused) + 1]
