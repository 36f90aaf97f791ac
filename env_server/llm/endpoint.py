"""An OpenAI-compatible chat endpoint (vLLM, OpenAI, llama.cpp, ...) with retries, for the user and judge.

`LLMEndpoint` is the configuration (built from `GROUNDSTATE_USER_*` / `GROUNDSTATE_JUDGE_*` settings);
`ChatEndpoint` sends one chat completion (`complete`, or `complete_turn` with OpenAI tool calling) through
the official `openai` client and turns every failure into `BackendError`:

- connection errors, timeouts, 408/409/429 and 5xx answers are retried with exponential backoff;
- an answer the caller's `parse` function rejects (`MalformedOutput`) is retried the same way;
- any other 4xx answer (bad request, unknown model, wrong key) is not retried: `RequestRejected`; nor is
  a 5xx that reports a request-body validation error (llama-cpp-python's answer to an unknown
  `response_format`).

A failure is never turned into a plausible-looking answer: after the last attempt the cause is raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from openai import OpenAI
from pydantic import BaseModel, ConfigDict, Field

from env_server.errors import BackendError

T = TypeVar("T")

#: HTTP statuses worth retrying besides 5xx: request timeout, conflict, rate limit.
_RETRIABLE_4XX = frozenset({408, 409, 429})


class LLMEndpoint(BaseModel):
    """Where a chat model lives and how to sample from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(
        description="OpenAI-compatible API root, including `/v1`.", examples=["http://127.0.0.1:8080/v1"]
    )
    model: str = Field(
        min_length=1, description="Model name sent with each request.", examples=["gpt-4o-mini"]
    )
    api_key: str = Field(default="not-needed", description="Bearer key; local servers accept anything.")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    seed: int | None = Field(default=0, description="Sampling seed, where the endpoint honours one.")
    max_tokens: int = Field(default=256, ge=1, description="Cap on generated tokens per reply.")
    timeout_s: float = Field(default=30.0, gt=0, description="Timeout of one HTTP request, in seconds.")
    max_retries: int = Field(default=3, ge=0, description="Retries after the first attempt.")
    backoff_s: float = Field(
        default=0.5, ge=0.0, description="Wait before the first retry; doubles before each next one."
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Fields added to every request body: sampling options a server accepts beyond "
        "OpenAI's (llama.cpp's `repeat_penalty`, vLLM's `top_k`).",
        examples=[{"repeat_penalty": 1.0}],
    )


class MalformedOutput(ValueError):
    """Raised by a `parse` function when the model's text cannot be used; the request is retried."""


class _Blank(MalformedOutput):
    """The reply had no text where text was required (retried, reported as an empty reply)."""


@dataclass(frozen=True)
class ModelToolCall:
    """A tool call the model made, as it wrote it: `arguments` is raw JSON text, not yet parsed."""

    id: str
    name: str
    arguments: str


class RequestRejected(BackendError):
    """The endpoint refused the request itself (a 4xx other than 408/409/429, or a body validation error)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class ChatEndpoint:
    """Sends chat completions to one `LLMEndpoint`; thread-safe, reuses its HTTP connections."""

    def __init__(self, endpoint: LLMEndpoint, *, purpose: str) -> None:
        """Create the client (no request is made yet).

        Args:
            endpoint: where to send requests and how to sample.
            purpose: what the endpoint serves ("simulated-user", "judge"), named in error messages.
        """
        self.endpoint = endpoint
        self.purpose = purpose
        self._client = OpenAI(
            base_url=endpoint.base_url, api_key=endpoint.api_key, timeout=endpoint.timeout_s, max_retries=0
        )

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        parse: Callable[[str], T],
        *,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> T:
        """One chat completion, parsed; retried with exponential backoff until `parse` accepts it.

        Args:
            messages: OpenAI chat messages (`role`, `content`).
            parse: turns the reply text into the caller's value, or raises `MalformedOutput`.
            temperature: overrides the endpoint's temperature (the judge always uses 0).
            response_format: the OpenAI `response_format` body field, if any.
            seed: overrides the endpoint's sampling seed (an episode's own seed).

        Returns:
            Whatever `parse` returned for the first acceptable reply.

        Raises:
            RequestRejected: the endpoint answered 4xx (other than 408/409/429); not retried.
            BackendError: every attempt failed (connection, timeout, 5xx, malformed output).
        """
        request = self._request(messages, temperature, seed)
        if response_format is not None:
            request["response_format"] = response_format

        def read(message: Any) -> T:
            text = message.content
            if not text or not text.strip():
                raise _Blank("the model returned an empty reply")
            return parse(text)

        return self._ask(request, read)

    def complete_turn(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        parse: Callable[[str, list[ModelToolCall]], T],
        *,
        seed: int | None = None,
        tool_choice: str | dict[str, Any] = "auto",
    ) -> T:
        """One chat completion that may call `tools` (OpenAI tool calling), parsed; retried like `complete`.

        Args:
            messages: OpenAI chat messages, tool calls and tool results included.
            tools: OpenAI `tools` entries; empty sends none (the model must answer in words).
            parse: turns the reply's text ("" when it has none) and tool calls into the caller's value, or
                raises `MalformedOutput` (a blank reply without calls, say).
            seed: overrides the endpoint's sampling seed.
            tool_choice: OpenAI's `tool_choice`, sent with the tools: `"auto"` (the model decides; sent
                explicitly, since llama-cpp-python's `chatml-function-calling` ignores tools without it), or
                `{"type": "function", "function": {"name": ...}}` to force that tool.

        Raises:
            RequestRejected: the endpoint answered 4xx (other than 408/409/429); not retried.
            BackendError: every attempt failed (connection, timeout, 5xx, malformed output).
        """
        request = self._request(messages, None, seed)
        if tools:
            request["tools"] = list(tools)
            request["tool_choice"] = tool_choice

        def read(message: Any) -> T:
            calls = [
                ModelToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
                for c in message.tool_calls or ()
                if getattr(c, "function", None) is not None
            ]
            return parse(message.content or "", calls)

        return self._ask(request, read)

    def _request(
        self, messages: Sequence[dict[str, Any]], temperature: float | None, seed: int | None
    ) -> dict[str, Any]:
        ep = self.endpoint
        request: dict[str, Any] = {
            "model": ep.model,
            "messages": list(messages),
            "temperature": ep.temperature if temperature is None else temperature,
            "max_tokens": ep.max_tokens,
        }
        if seed is not None or ep.seed is not None:
            request["seed"] = seed if seed is not None else ep.seed
        if ep.extra_body:
            request["extra_body"] = dict(ep.extra_body)
        return request

    def _ask(self, request: dict[str, Any], read: Callable[[Any], T]) -> T:
        """Send `request` until `read` accepts the reply's message; every failure retried, then raised."""
        ep = self.endpoint
        attempts = ep.max_retries + 1
        cause = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(ep.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._client.chat.completions.create(**request)
            except openai.APIStatusError as exc:
                status = exc.status_code
                cause = f"HTTP {status}: {_short(exc.message)}"
                if (status < 500 and status not in _RETRIABLE_4XX) or _invalid_body(exc.message):
                    raise RequestRejected(self._failure(cause, attempt + 1), status=status) from exc
                continue
            except openai.APIError as exc:  # connection refused, reset, timeout, unparsable body
                detail = f"{exc} ({exc.__cause__})" if exc.__cause__ else str(exc)
                cause = f"{type(exc).__name__}: {_short(detail)}"
                continue
            try:
                message = response.choices[0].message
            except (AttributeError, IndexError, TypeError):
                cause = f"not a chat completion: {_short(str(response))!r}"
                continue
            try:
                return read(message)
            except _Blank as exc:
                cause = str(exc)
            except MalformedOutput as exc:
                cause = f"malformed reply ({exc}): {_short(message.content or '')!r}"
        raise BackendError(self._failure(cause, attempts))

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def _failure(self, cause: str, attempts: int) -> str:
        ep = self.endpoint
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        return f"{self.purpose} endpoint {ep.base_url} (model {ep.model}) failed after {tries}: {cause}"


def _invalid_body(message: str) -> bool:
    """Whether an error says the request body failed validation (llama-cpp-python reports that as a 500)."""
    return "validation error" in message and "'body'" in message


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
