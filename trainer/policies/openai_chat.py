"""A chat model behind any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, ...).

Spec: `openai:MODEL[@BASE_URL][?option=value&...]`, e.g. `openai:gpt-4.1-mini`,
`openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8001/v1?temperature=0.7`. Options are the fields of
`OpenAIChatOptions`. The API key is read from the environment variable named by `api_key_env`
(`OPENAI_API_KEY` by default; local servers accept anything).

Tool formats (`tool_format`):
- `native`: tools go in the request's `tools` field and calls come back as `tool_calls`;
- `hermes`: tools are described in the system prompt and calls are read from `<tool_call>` text (for
  servers whose chat template has no tool support);
- `auto` (default): native, but when a reply has no `tool_calls` and its text holds `<tool_call>` blocks
  (Qwen/Hermes models behind a server that does not parse them), those are parsed instead.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Literal, Self

import openai
from openai import AsyncOpenAI
from pydantic import Field

from shared.schema_bounds import bounded
from shared.strict_model import StrictModel
from trainer.policies._hermes import parse_tool_calls, to_hermes_messages
from trainer.policies.base import (
    ContextOverflowError,
    Message,
    Policy,
    PolicyError,
    PolicySpecError,
    ToolCall,
    Turn,
    new_call_id,
    openai_tools,
    parse_options,
    split_stop,
)
from trainer.policies.context import served_context

__all__ = ["OpenAIChatOptions", "OpenAIChatPolicy"]

_OVERFLOW = re.compile(r"context[ _](length|window|size)|maximum context|too many tokens", re.I)


class OpenAIChatOptions(StrictModel):
    """How to reach the endpoint and how to sample."""

    model: str = Field(min_length=1)
    """The model name sent with each request."""
    base_url: str | None = None
    """The API root including `/v1`; the `openai` client's default (`OPENAI_BASE_URL` or OpenAI) if null."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (unset: `not-needed`, fine for local servers)."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature."""
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    """Nucleus sampling mass, if set."""
    max_tokens: int | None = Field(default=1024, ge=1)
    """Cap on generated tokens per turn."""
    seed: int | None = None
    """Sampling seed, where the endpoint honours one."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Timeout of one HTTP request."""
    max_retries: int = Field(default=2, ge=0)
    """Retries of the `openai` client itself (connection errors, 408/409/429, 5xx) before a turn fails."""
    tool_format: Literal["auto", "native", "hermes"] = "auto"
    """How tools are offered and calls read (see the module docstring)."""
    schema_bound: int | None = Field(default=None, ge=1)
    """Cap every `maxLength` / `maxItems` of the tools' schemas at this (native tools): llama.cpp compiles a
    schema into a grammar and fails on the domains' 4,000-character bounds; 1000 works (see
    `shared.schema_bounds`). The server still checks the real bounds."""


class OpenAIChatPolicy(Policy):
    """Asks an OpenAI-compatible chat endpoint for each turn."""

    def __init__(self, options: OpenAIChatOptions) -> None:
        """Create the client (no request is made yet)."""
        self.options = options
        self.name = options.model
        self._client = AsyncOpenAI(
            base_url=options.base_url,
            api_key=os.environ.get(options.api_key_env) or "not-needed",
            timeout=options.timeout_s,
            max_retries=options.max_retries,
        )

    @classmethod
    def from_spec(cls, target: str, options: Mapping[str, str]) -> Self:
        """Build from `MODEL[@BASE_URL]` and the spec's options.

        Raises:
            PolicySpecError: No model, or an invalid option.
        """
        model, _, base_url = target.partition("@")
        if not model:
            raise PolicySpecError("the openai policy needs a model: openai:MODEL[@BASE_URL]")
        values: dict[str, Any] = {"model": model, **options}
        if base_url:
            values["base_url"] = base_url
        return cls(parse_options(OpenAIChatOptions, values, "openai"))

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Send the conversation and read the reply's text, tool calls and token usage.

        Raises:
            ContextOverflowError: The endpoint says the conversation exceeds the model's context.
            PolicyError: The endpoint failed (unreachable, timeout, HTTP error after the client's retries).
        """
        opts = self.options
        hermes = opts.tool_format == "hermes"
        request: dict[str, Any] = {
            "model": opts.model,
            "messages": to_hermes_messages(messages, tools) if hermes else messages,
            "temperature": opts.temperature,
        }
        if tools and not hermes:
            # said outright: OpenAI defaults to "auto" with tools, but llama-cpp-python reads a missing
            # tool_choice as "none" and never shows the model its tools
            offered = openai_tools(tools)
            if opts.schema_bound is not None:
                offered = bounded(offered, opts.schema_bound)
            request["tools"], request["tool_choice"] = offered, "auto"
        for key in ("top_p", "max_tokens", "seed"):
            if getattr(opts, key) is not None:
                request[key] = getattr(opts, key)
        try:
            response = await self._client.chat.completions.create(**request)
        except openai.APIStatusError as exc:
            where = f"policy endpoint {opts.base_url or 'default'} (model {opts.model})"
            if exc.status_code in (400, 413) and _OVERFLOW.search(exc.message):
                raise ContextOverflowError(f"{where}: {exc.message}") from exc
            raise PolicyError(f"{where} answered HTTP {exc.status_code}: {exc.message}") from exc
        except openai.APIError as exc:
            where = f"policy endpoint {opts.base_url or 'default'} (model {opts.model})"
            raise PolicyError(f"{where} failed: {type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise PolicyError(f"policy endpoint returned no choices (model {opts.model})")
        choice = response.choices[0]
        content = choice.message.content or ""
        calls = [_native_call(c) for c in choice.message.tool_calls or [] if c.type == "function"]
        if not calls and opts.tool_format != "native" and "<tool_call>" in content:
            content, calls = parse_tool_calls(content)
        content, stop = split_stop(content)
        usage = response.usage
        return Turn(
            content=content.strip(),
            tool_calls=calls,
            stop=stop,
            finish_reason=choice.finish_reason,
            tokens_in=usage.prompt_tokens if usage else 0,
            tokens_out=usage.completion_tokens if usage else 0,
        )

    async def context_window(self) -> int | None:
        """The window the endpoint reports (vLLM, llama.cpp's server); None for one that reports none."""
        if self.options.base_url is None:
            return None
        return await served_context(self.options.base_url, self.options.model)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()


def _native_call(call: Any) -> ToolCall:
    raw = call.function.arguments or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolCall(
            id=call.id or new_call_id(),
            name=call.function.name,
            parse_error=f"the arguments are not valid JSON ({exc.msg}): {raw[:200]}",
        )
    if not isinstance(arguments, dict):
        return ToolCall(
            id=call.id or new_call_id(), name=call.function.name, parse_error="arguments must be an object"
        )
    return ToolCall(id=call.id or new_call_id(), name=call.function.name, arguments=arguments)
