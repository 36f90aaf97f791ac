"""How a conversation becomes token ids, and generated ids a turn: one module for evaluation and training.

The `local:` policy (evaluation) and the Verl agent loop (training) both render through `ChatFormat` and keep
their token sequence with `EpisodeTokens`, so a model is trained on exactly the prompts it is evaluated on:
the same chat template, the same tool schemas (natively when the template renders `tools`, else in the
chosen format's text rendering), the same tool-call parser. The tool-call format
(`trainer.policies.tool_formats`) is read off the chat template or named explicitly; a template whose format
no parser reads is refused here, when the format is built, never discovered as a run of zero rewards.

Token bookkeeping (`EpisodeTokens`): the first turn tokenizes the rendered prompt; every later turn appends
only the tokens of the messages that arrived since (tool results, the user's reply), rendered by the chat
template after the previously generated ids, which are never re-tokenized. A turn cut off before its
end-of-turn token gets one appended (as context) so the next message starts cleanly. Needs only a
transformers-style tokenizer object (`apply_chat_template`, `encode`, `decode`); nothing here imports torch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trainer.policies.base import Message, Turn, openai_tools, split_stop
from trainer.policies.tool_formats import ToolFormat, choose_format

__all__ = ["ChatFormat", "EpisodeTokens", "IncrementalRenderError"]


_ASSISTANT_TEXT = "\u2063stand-in assistant turn\u2063"
_STAND_IN_USER: Message = {"role": "user", "content": "\u2063stand-in user message\u2063"}
_STAND_IN: list[Message] = [
    {"role": "system", "content": "\u2063stand-in system prompt\u2063"},
    _STAND_IN_USER,
    {"role": "assistant", "content": _ASSISTANT_TEXT},
]
"""A conversation rendered before the new messages, so they render as they would after any assistant turn."""
_BARE_STAND_IN: list[Message] = _STAND_IN[1:]
"""The same without system prompt (rendered without tools): for templates that move the system prompt and
tools to the last user message (Mistral's), whose later messages are appended as the template writes them
when it has neither."""


class IncrementalRenderError(RuntimeError):
    """The chat template does not render a conversation as the concatenation of its turns."""


@dataclass(frozen=True)
class ChatFormat:
    """A tokenizer's chat template, tool format and end-of-turn tokens."""

    tokenizer: Any
    """A transformers tokenizer (anything with `apply_chat_template`, `encode`, `decode`)."""
    tool_format: ToolFormat
    """How the model writes tool calls (and, without native tools, how it is told about them)."""
    native_tools: bool
    """The chat template renders `tools` itself; otherwise they go in `tool_format`'s text rendering."""
    eos_ids: tuple[int, ...]
    """Token ids that end a turn (generation stops on any of them)."""

    @classmethod
    def of(
        cls, tokenizer: Any, eos_ids: Iterable[int] | int | None = None, tool_format: str = "auto"
    ) -> ChatFormat:
        """The format of a tokenizer.

        Args:
            tokenizer: The tokenizer.
            eos_ids: The model's end-of-turn ids (its generation config's `eos_token_id`); the tokenizer's
                own end-of-sequence token is always included, first.
            tool_format: A name of `trainer.policies.tool_formats.FORMATS`, or `auto` to read the template.

        Raises:
            UnsupportedTemplateError: The template's tool format is not supported (the message names those
                that are), or `tool_format` is unknown.
        """
        ids = [eos_ids] if isinstance(eos_ids, int) else list(eos_ids or [])
        if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
            ids.insert(0, tokenizer.eos_token_id)
        chosen, native = choose_format(tokenizer.chat_template, tool_format)
        return cls(tokenizer=tokenizer, tool_format=chosen, native_tools=native, eos_ids=tuple(ids))

    def render(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        generation_prompt: bool,
        native_tools: bool = True,
    ) -> str:
        """The chat template's text for a conversation (OpenAI format, tools as the server gives them).

        `native_tools=False` leaves the tools out of a template that renders them (see `_BARE_STAND_IN`).
        """
        if self.native_tools:
            return str(
                self.tokenizer.apply_chat_template(
                    [self.tool_format.native_message(_native_message(m)) for m in messages],
                    tools=(openai_tools(tools) or None) if native_tools else None,
                    tokenize=False,
                    add_generation_prompt=generation_prompt,
                )
            )
        return str(
            self.tokenizer.apply_chat_template(
                self.tool_format.text_messages(messages, tools),
                tokenize=False,
                add_generation_prompt=generation_prompt,
            )
        )

    def encode(self, text: str) -> list[int]:
        """Token ids of rendered template text (special tokens in the text are recognised, none added)."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def prompt_ids(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[int]:
        """The whole prompt of a conversation's first turn, ending with the assistant's generation prompt."""
        return self.encode(self.render(messages, tools, generation_prompt=True))

    def continuation_text(self, new: list[Message], tools: list[dict[str, Any]]) -> str:
        """Template text of messages that follow an assistant turn, up to the next generation prompt.

        Rendered after a stand-in conversation and cut after the stand-in assistant's end-of-turn token, so
        the text is exactly what the template puts between a finished assistant turn and the next one. A
        template that moves the system prompt and tools to the last user message (Mistral's) renders a new
        user message differently with them; it is then appended as the template writes it without them
        (the first turn's prompt keeps them, where the model read them).

        Raises:
            IncrementalRenderError: The template renders a longer conversation with a different prefix.
        """
        for stand_in, native in ((_STAND_IN, True), (_BARE_STAND_IN, False)):
            prefix = self.render(stand_in, tools, generation_prompt=False, native_tools=native)
            full = self.render(stand_in + new, tools, generation_prompt=True, native_tools=native)
            if full.startswith(prefix):
                return full[self._turn_end(prefix) :]
        raise IncrementalRenderError("the chat template does not render conversations incrementally")

    def assistant_text(self, messages: list[Message], tools: list[dict[str, Any]], reply: Message) -> str:
        """The template's text of the assistant message `reply` after `messages`, through its end of turn.

        This is what the model should generate there: the warm start's target, in the model's own format.

        Raises:
            IncrementalRenderError: The template renders the reply with a different prompt before it.
        """
        attempts = ((messages, True), ([_STAND_IN_USER], False))
        for before, native in attempts:
            prompt = self.render(before, tools, generation_prompt=True, native_tools=native)
            full = self.render([*before, reply], tools, generation_prompt=False, native_tools=native)
            if full.startswith(prompt):
                target = full[len(prompt) :]
                end = self._text(self.end_of_turn_id)
                return target[: target.index(end) + len(end)] if end in target else target
        raise IncrementalRenderError("the chat template renders an assistant turn with a different prefix")

    @cached_property
    def end_of_turn_id(self) -> int:
        """The end-of-turn token the template writes right after an assistant message's content.

        Read off the template, not the tokenizer's `eos_token`, which some tokenizers get wrong (SmolLM2's
        GGUF tokenizer names `<|im_start|>`); the first of `eos_ids` if the template writes nothing there.
        """
        prefix = self.render(_STAND_IN, [], generation_prompt=False)
        after = prefix[prefix.rfind(_ASSISTANT_TEXT) + len(_ASSISTANT_TEXT) :]
        ids = self.encode(after) if after else []
        if ids:
            return ids[0]
        if not self.eos_ids:
            raise IncrementalRenderError(
                "the chat template ends assistant turns with no token, and no eos is known"
            )
        return self.eos_ids[0]

    @cached_property
    def stop_ids(self) -> frozenset[int]:
        """Ids that end a generated turn: the model's end-of-sequence ids and the template's end of turn."""
        return frozenset((*self.eos_ids, self.end_of_turn_id))

    @cached_property
    def _dropped_ids(self) -> frozenset[int]:
        """Special tokens left out of a generated turn's text: all but the format's call markers."""
        special = set(getattr(self.tokenizer, "all_special_ids", []) or [])
        for token_id, token in (getattr(self.tokenizer, "added_tokens_decoder", {}) or {}).items():
            if getattr(token, "special", False):
                special.add(int(token_id))
        markers = {
            ids[0]
            for marker in self.tool_format.markers
            if len(ids := self.encode(marker)) == 1 and ids[0] in special
        }
        return frozenset(special - markers)

    def _text(self, token_id: int) -> str:
        return str(self.tokenizer.decode([token_id], skip_special_tokens=False))

    def _turn_end(self, rendered: str) -> int:
        """Where the stand-in assistant's turn ends (just after its end-of-turn token) in rendered text."""
        start = rendered.rfind(_ASSISTANT_TEXT) + len(_ASSISTANT_TEXT)
        text = self._text(self.end_of_turn_id)
        return rendered.index(text, start) + len(text)

    def turn(
        self,
        token_ids: list[int],
        logprobs: list[float] | None,
        *,
        context_ids: list[int],
        tokens_in: int,
        tools: list[dict[str, Any]] | None = None,
    ) -> Turn:
        """A generated turn: its text parsed into content, tool calls and the stop mark, with its tokens.

        The text is decoded from the ids as sampled (never re-tokenised) with special tokens dropped, except
        the tool-call markers of the format (`[TOOL_CALLS]`, `<|python_tag|>`, ...), which its parser needs.

        Args:
            token_ids: The generated ids, the end-of-turn token included when one was sampled.
            logprobs: One log-probability per generated id.
            context_ids: The ids appended before this generation (loss mask 0).
            tokens_in: The length of the whole sequence the model read.
            tools: The episode's tools (formats that write untyped arguments type them by the schema).
        """
        finish = "stop" if token_ids and token_ids[-1] in self.stop_ids else "length"
        kept = [t for t in token_ids if t not in self._dropped_ids]
        text = str(self.tokenizer.decode(kept, skip_special_tokens=False))
        content, calls = self.tool_format.parse(text, tools or [])
        content, stop = split_stop(content)
        return Turn(
            content=content,
            tool_calls=calls,
            stop=stop,
            finish_reason="tool_calls" if calls else finish,
            tokens_in=tokens_in,
            tokens_out=len(token_ids),
            context_ids=context_ids,
            token_ids=token_ids,
            logprobs=logprobs,
        )


@dataclass
class EpisodeTokens:
    """The token sequence of one episode, grown turn by turn; generated ids are kept exactly as sampled."""

    format: ChatFormat
    ids: list[int] = field(default_factory=list)
    """Every token so far: prompt, generated turns, and the context appended between them."""
    _seen: int = 0
    _pending: list[int] = field(default_factory=list)

    def context(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[int]:
        """The ids to append before the next generation: the whole prompt at first, then the new messages.

        Args:
            messages: The whole conversation so far (OpenAI format); after the first turn it must be the
                conversation of the previous call grown by this episode's own assistant turn and what
                followed it.
            tools: The episode's tools.

        Raises:
            IncrementalRenderError: The conversation did not grow by this episode's last turn, or the template
                cannot render incrementally.
        """
        if not self.ids:
            return self.format.prompt_ids(messages, tools)
        if len(messages) <= self._seen or messages[self._seen]["role"] != "assistant":
            raise IncrementalRenderError(
                f"expected this episode's last turn at message {self._seen}; a token-level transcript must "
                "see the same conversation grow by its own turns"
            )
        return self._pending + self.format.encode(
            self.format.continuation_text(messages[self._seen + 1 :], tools)
        )

    def add_context(self, context: list[int]) -> None:
        """Append context ids (returned by `context`) before generating."""
        self.ids += context

    def add_generated(self, token_ids: list[int], seen: int) -> None:
        """Append a generated turn.

        Args:
            token_ids: The generated ids, exactly as sampled.
            seen: The number of messages the turn answered (its assistant message comes next).
        """
        self.ids += token_ids
        self._seen = seen
        stopped = bool(token_ids) and token_ids[-1] in self.format.stop_ids
        self._pending = [] if stopped else [self.format.end_of_turn_id]


def _native_message(message: Message) -> Message:
    """An OpenAI message as transformers chat templates expect it (tool-call arguments as objects)."""
    if message["role"] != "assistant" or not message.get("tool_calls"):
        return message
    calls = []
    for call in message["tool_calls"]:
        arguments = call["function"]["arguments"]
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = {}
        calls.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": arguments},
            }
        )
    return {**message, "tool_calls": calls}
