"""The model behind the gateway: renders a chat request to token ids, generates, and keeps the exact tokens.

`LocalBackend` runs a transformers model on this machine (`trainer.policies.local.LocalModel`, the model of
`--policy local:` and `groundstate train local`): the request is rendered by the model's chat template and
tool format (`ChatFormat`), generated, and the sampled ids are decoded and parsed into content and tool
calls, never re-tokenised. On GPUs the same interface would sit over vLLM or SGLang; only the local backend
exists today.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from trainer.policies.base import Message, Turn
from trainer.policies.local import LocalModel, LocalOptions

__all__ = ["GatewayBackend", "Generation", "LocalBackend"]


@dataclass(frozen=True)
class Generation:
    """One generation: the parsed turn and the tokens behind it."""

    turn: Turn
    """Content, tool calls and the stop mark, parsed from the decoded completion."""
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]


class GatewayBackend(ABC):
    """A model the gateway can ask for one assistant turn with its exact tokens."""

    name: str = "model"

    @abstractmethod
    async def generate(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        max_tokens: int | None,
        temperature: float | None,
    ) -> Generation:
        """Render `messages` and `tools`, generate one assistant turn, and return it with its tokens."""


class LocalBackend(GatewayBackend):
    """A local transformers model (one generation at a time; the model's lock serialises them)."""

    def __init__(self, loaded: LocalModel, options: LocalOptions) -> None:
        self.loaded, self.options, self.name = loaded, options, loaded.name
        self.format = loaded.chat_format(options.tool_format)

    async def generate(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        max_tokens: int | None,
        temperature: float | None,
    ) -> Generation:
        """Render with the chat template, generate, parse the sampled ids' text."""
        prompt = self.format.prompt_ids(messages, tools)
        updates: dict[str, Any] = {"kv_cache": False}
        if max_tokens is not None:
            updates["max_new_tokens"] = max_tokens
        if temperature is not None:
            updates["temperature"] = temperature
        options = self.options.model_copy(update=updates)
        token_ids, logprobs, _finish, _cache = await asyncio.to_thread(self.loaded.generate, prompt, options)
        turn = self.format.turn(token_ids, logprobs, context_ids=prompt, tokens_in=len(prompt), tools=tools)
        return Generation(turn=turn, prompt_ids=prompt, completion_ids=token_ids, logprobs=logprobs)
