"""Tool-call formats: how a chat model is told its tools, how it writes a call, and how we read one back.

Every chat-model family writes tool calls its own way, and its chat template (the Jinja text shipped with the
tokenizer) both describes the tools and renders earlier calls in that way. A parser for the wrong family
never finds a call, so every episode would score 0 and training would learn nothing, silently. So the
format is chosen once, when a model is loaded: from its chat template (`detect`), or named explicitly
(`tool_format` of the `local:` policy, of `train local`, of `train warm-start` and of the Verl settings). A
template that renders tools in a way none of these formats reads is refused there (`UnsupportedTemplateError`,
naming the supported formats). A template that knows no tools at all (SmolLM2) gets them in the chosen
format's own text rendering (`text_messages`), Hermes unless told otherwise.

Parsers read the generated *text* (decoded from the sampled ids, which are never re-tokenised); the markers
some families make special tokens (`[TOOL_CALLS]`, `<|python_tag|>`) are kept in that text by
`ChatFormat.turn`. transformers renders tools through the template (`apply_chat_template(tools=...)`) but has
no general parser for generated calls; the parsers here are our own.

Formats:
    hermes       `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Qwen2.5, Hermes, SmolLM3, ...)
    llama3_json  `<|python_tag|>{"name": ..., "parameters": {...}}` or the bare JSON object (Llama 3.1-3.3)
    mistral      `[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]` (Mistral 7B v0.3, Mixtral 8x22B,
                 Nemo) or `[TOOL_CALLS]name[ARGS]{...}` (Mistral Small 3.2, Devstral, Magistral)
    qwen3_coder  `<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>`
                 (Qwen3-Coder, Qwen3.5)
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

from trainer.policies._hermes import (
    call_of,
    decoded_arguments,
    json_objects,
    parse_tool_calls,
    to_hermes_messages,
)
from trainer.policies.base import Message, ToolCall, new_call_id, openai_tools

__all__ = [
    "FORMATS",
    "ToolFormat",
    "ToolFormatName",
    "UnsupportedTemplateError",
    "choose_format",
    "detect",
]

ToolFormatName = Literal["auto", "hermes", "llama3_json", "mistral", "qwen3_coder"]
"""A format's name in settings; `auto` reads it off the chat template."""


class UnsupportedTemplateError(ValueError):
    """The chat template renders tools in a format no parser here reads (or names none that is known)."""


class ToolFormat(ABC):
    """One family's way of writing tool calls."""

    name: ClassVar[str]
    markers: ClassVar[tuple[str, ...]]
    """Text only this family's calls contain; kept when special tokens are dropped from generated text."""

    @abstractmethod
    def renders(self, template: str) -> bool:
        """Whether a chat template that renders tools renders them in this format."""

    @abstractmethod
    def parse(self, text: str, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        """The text without its calls (stripped), and the calls in order.

        A call that cannot be read becomes a `ToolCall` with `parse_error` set, so the model learns why.

        Args:
            text: Generated text, special tokens kept except end-of-turn ones.
            tools: The episode's tools (some formats write arguments untyped and need the schema).
        """

    @abstractmethod
    def text_messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
        """The conversation as plain system/user/assistant text in this format (templates without tools)."""

    def native_message(self, message: Message) -> Message:
        """An OpenAI message as this family's chat template expects it (when it renders tools itself)."""
        return message


class Hermes(ToolFormat):
    """`<tool_call>` blocks of JSON; `trainer.policies._hermes` holds the parser and the text rendering."""

    name = "hermes"
    markers = ("<tool_call>", "</tool_call>")

    def renders(self, template: str) -> bool:
        return "<tool_call>" in template

    def parse(self, text: str, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        return parse_tool_calls(text) if "<tool_call>" in text else (text.strip(), [])

    def text_messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
        return to_hermes_messages(messages, tools)


class Llama3Json(ToolFormat):
    """Llama 3.1-3.3: one JSON object `{"name", "parameters"}`, bare or after `<|python_tag|>`.

    Llama's own templates render one call per assistant turn; several objects in a row (apart by `;`, as
    Llama sometimes writes them, or by white space) are read as parallel calls.
    """

    name = "llama3_json"
    markers = ("<|python_tag|>",)
    _TAG = "<|python_tag|>"

    def renders(self, template: str) -> bool:
        return self._TAG in template or ("<|start_header_id|>" in template and '"parameters"' in template)

    def parse(self, text: str, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        if self._TAG in text:
            content, _, body = text.partition(self._TAG)
            return content.strip(), self._calls(body, tagged=True)
        body = text.strip()
        if not body.startswith("{"):
            return body, []
        calls = self._calls(body, tagged=False)
        return ("", calls) if calls else (body, [])

    def _calls(self, body: str, tagged: bool) -> list[ToolCall]:
        body = body.strip()
        for end in ("<|eom_id|>", "<|eot_id|>"):
            body = body.removesuffix(end).strip()
        try:
            objects = json_objects(body, separators=" \t\r\n;,")
        except json.JSONDecodeError as exc:
            if not tagged and not re.match(r'\{\s*"name"\s*:', body):
                return []  # a bare text reply that happens to start with a brace
            return [
                ToolCall(
                    id=new_call_id(),
                    name="",
                    parse_error=f"the tool call is not valid JSON ({exc.msg} at character {exc.pos}): "
                    'write {"name": ..., "parameters": {...}}',
                )
            ]
        if not tagged and not all(isinstance(o, dict) and "name" in o for o in objects):
            return []
        return [call_of(obj) for obj in objects]

    def text_messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
        listed = "\n\n".join(json.dumps(t, ensure_ascii=False, indent=4) for t in openai_tools(tools))
        prompt = (
            "Given the following functions, please respond with a JSON for a function call with its proper "
            "arguments that best answers the given prompt.\n\n"
            'Respond in the format {"name": function name, "parameters": dictionary of argument name and its '
            "value}. Do not use variables.\n\n" + listed
        )

        def call_text(call: dict[str, Any]) -> str:
            name, arguments = call["function"]["name"], decoded_arguments(call["function"]["arguments"])
            return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)

        return _text_conversation(messages, tools, prompt, call_text, "; ", lambda m: m.get("content") or "")


class Mistral(ToolFormat):
    """Mistral: `[TOOL_CALLS]` then a JSON list of calls (v3 tokenizer) or `name[ARGS]{...}` (v11 on)."""

    name = "mistral"
    markers = ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]")
    _TAG = "[TOOL_CALLS]"

    def renders(self, template: str) -> bool:
        return self._TAG in template

    def parse(self, text: str, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        if self._TAG not in text:
            return text.strip(), []
        content, _, rest = text.partition(self._TAG)
        calls: list[ToolCall] = []
        for body in rest.split(self._TAG):
            calls.extend(self._calls(body.strip()))
        return content.strip(), calls

    def _calls(self, body: str) -> list[ToolCall]:
        if not body:
            return [ToolCall(id=new_call_id(), name="", parse_error="nothing follows [TOOL_CALLS]")]
        if "[ARGS]" in body and not body.startswith(("[", "{")):
            name, _, arguments = body.partition("[ARGS]")
            name = name.split("[CALL_ID]")[0].strip()
            try:
                return [call_of({"name": name, "arguments": json_objects(arguments)[0]})]
            except (json.JSONDecodeError, IndexError) as exc:
                error = f"the arguments are not valid JSON: {exc}"
                return [ToolCall(id=new_call_id(), name=name, parse_error=error)]
        try:
            values = json_objects(body)
        except json.JSONDecodeError as exc:
            return [
                ToolCall(
                    id=new_call_id(),
                    name="",
                    parse_error=f"the tool calls are not valid JSON ({exc.msg} at character {exc.pos}): "
                    'write [TOOL_CALLS] [{"name": ..., "arguments": {...}}]',
                )
            ]
        flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
        return [call_of(v) for v in flat]

    def text_messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
        listed = json.dumps(openai_tools(tools), ensure_ascii=False)
        prompt = (
            f"[AVAILABLE_TOOLS] {listed}[/AVAILABLE_TOOLS]\n\nTo call tools, write [TOOL_CALLS] followed "
            "by a JSON list of calls: "
            '[TOOL_CALLS] [{"name": <function-name>, "arguments": <args-json-object>}]'
        )

        def call_text(call: dict[str, Any]) -> str:
            name, arguments = call["function"]["name"], decoded_arguments(call["function"]["arguments"])
            return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

        def result_text(message: Message) -> str:
            content = message.get("content") or ""
            call_id = mistral_id(message.get("tool_call_id") or "")
            return f'[TOOL_RESULTS] {{"content": {content}, "call_id": "{call_id}"}}[/TOOL_RESULTS]'

        def joined(calls: list[dict[str, Any]]) -> str:
            return "[TOOL_CALLS] [" + ", ".join(call_text(c) for c in calls) + "]"

        return _text_conversation(messages, tools, prompt, call_text, ", ", result_text, joined=joined)

    def native_message(self, message: Message) -> Message:
        """Mistral's templates insist on 9-character alphanumeric call ids; ours are mapped to such ids."""
        if message["role"] == "tool" and message.get("tool_call_id"):
            return {**message, "tool_call_id": mistral_id(message["tool_call_id"])}
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls = [{**c, "id": mistral_id(c.get("id") or "")} for c in message["tool_calls"]]
            return {**message, "tool_calls": calls}
        return message


def mistral_id(call_id: str) -> str:
    """A stable 9-character alphanumeric id for one of our call ids (what Mistral's templates accept)."""
    if len(call_id) == 9 and call_id.isalnum():
        return call_id
    return hashlib.sha256(call_id.encode()).hexdigest()[:9]


class Qwen3Coder(ToolFormat):
    """Qwen3-Coder's XML calls; parameter values are written untyped, so the tool's schema types them."""

    name = "qwen3_coder"
    markers = ("<tool_call>", "</tool_call>")
    _BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
    _FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)(?:</function>|\Z)", re.DOTALL)
    _PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)

    def renders(self, template: str) -> bool:
        return "<function=" in template and "<parameter=" in template

    def parse(self, text: str, tools: list[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
        blocks = list(self._BLOCK.finditer(text))
        if not blocks:
            return text.strip(), []
        calls: list[ToolCall] = []
        for block in blocks:
            functions = list(self._FUNCTION.finditer(block.group(1)))
            if not functions:
                calls.append(
                    ToolCall(
                        id=new_call_id(),
                        name="",
                        parse_error="a <tool_call> needs <function=NAME> <parameter=KEY>value</parameter>",
                    )
                )
            for function in functions:
                name = function.group(1).strip()
                types = _property_types(tools, name)
                arguments = {
                    p.group(1).strip(): _typed(_strip_newline(p.group(2)), types.get(p.group(1).strip()))
                    for p in self._PARAMETER.finditer(function.group(2))
                }
                calls.append(ToolCall(id=new_call_id(), name=name, arguments=arguments))
        return self._BLOCK.sub("", text).strip(), calls

    def text_messages(self, messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
        listed = "\n".join(json.dumps(t, ensure_ascii=False) for t in openai_tools(tools))
        prompt = (
            "# Tools\n\nYou have access to the following functions:\n\n"
            f"<tools>\n{listed}\n</tools>\n\n"
            "If you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
            "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
            "</parameter>\n</function>\n</tool_call>"
        )
        return _text_conversation(
            messages,
            tools,
            prompt,
            lambda c: qwen3_coder_call(c["function"]["name"], decoded_arguments(c["function"]["arguments"])),
            "\n",
            lambda m: f"<tool_response>\n{m.get('content') or ''}\n</tool_response>",
        )


def qwen3_coder_call(name: str, arguments: Any) -> str:
    """One call as Qwen3-Coder's template writes it (objects and lists as JSON, everything else as text)."""
    parameters = "".join(
        f"<parameter={key}>\n{_untyped(value)}\n</parameter>\n"
        for key, value in (arguments.items() if isinstance(arguments, dict) else [])
    )
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"


def _untyped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else _jinja_string(value)


def _jinja_string(value: Any) -> str:
    """What Jinja's `string` filter writes (Python's `str`: True, None)."""
    return str(value)


def _strip_newline(value: str) -> str:
    value = value.removeprefix("\n")
    return value.removesuffix("\n")


def _property_types(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for tool in tools:
        function = tool.get("function") or {}
        if function.get("name") == name:
            properties = (function.get("parameters") or {}).get("properties") or {}
            return {k: (v or {}).get("type") for k, v in properties.items() if isinstance(v, dict)}
    return {}


_PYTHON_LITERALS: dict[str, Any] = {"True": True, "False": False, "None": None}


def _typed(value: str, schema_type: Any) -> Any:
    """A parameter's value: text for string parameters, else JSON (or the Python literal Jinja wrote)."""
    types = set(schema_type) if isinstance(schema_type, list) else {schema_type}
    if types == {"string"}:
        return value
    if value.strip() in _PYTHON_LITERALS:
        return _PYTHON_LITERALS[value.strip()]
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _text_conversation(
    messages: list[Message],
    tools: list[dict[str, Any]],
    prompt: str,
    call_text: Any,
    separator: str,
    result_text: Any,
    joined: Any = None,
) -> list[Message]:
    """A conversation as system/user/assistant text.

    The tools go in the system prompt, calls in the assistant's text, each run of tool results in one user
    message.
    """
    out: list[Message] = []
    for message in messages:
        role = message["role"]
        content = message.get("content") or ""
        if role == "system":
            out.append({"role": "system", "content": f"{content}\n\n{prompt}" if tools else content})
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            written = ""
            if calls:
                written = joined(calls) if joined else separator.join(call_text(c) for c in calls)
            text = "\n".join(part for part in (content, written) if part).strip()
            out.append({"role": "assistant", "content": text})
        elif role == "tool":
            if out and out[-1].get("_tool"):
                out[-1]["content"] += "\n" + result_text(message)
            else:
                out.append({"role": "user", "content": result_text(message), "_tool": True})
        else:
            out.append({"role": role, "content": content})
    if tools and (not out or out[0]["role"] != "system"):
        out.insert(0, {"role": "system", "content": prompt})
    return [{"role": m["role"], "content": m["content"]} for m in out]


FORMATS: dict[str, ToolFormat] = {f.name: f for f in (Qwen3Coder(), Hermes(), Mistral(), Llama3Json())}
"""The supported formats, in detection order (Qwen3-Coder's XML also sits inside `<tool_call>`)."""


def detect(template: str | None) -> tuple[ToolFormat, bool]:
    """The format of a chat template, and whether the template renders tools itself.

    A template that never mentions `tools` gets them in the Hermes text format.

    Raises:
        UnsupportedTemplateError: The template renders tools in a format none of `FORMATS` reads.
    """
    return choose_format(template, "auto")


def choose_format(template: str | None, name: str = "auto") -> tuple[ToolFormat, bool]:
    """The format to use for a chat template: `name`, or the template's own when `name` is `auto`.

    A named format is used as given: rendered by the template when it renders tools, else in the format's
    own text rendering (e.g. to train SmolLM2, whose template knows no tools, on Llama's JSON calls).

    Raises:
        UnsupportedTemplateError: `name` is unknown, the tokenizer has no chat template, or (for `auto`) the
            template renders tools in a format none of `FORMATS` reads.
    """
    supported = ", ".join(FORMATS)
    if name != "auto" and name not in FORMATS:
        raise UnsupportedTemplateError(f"unknown tool_format {name!r}: use auto or one of {supported}")
    if not template:
        raise UnsupportedTemplateError(
            "the tokenizer has no chat template (groundstate renders prompts with it)"
        )
    native = "tools" in template
    if name != "auto":
        return FORMATS[name], native
    if not native:
        return FORMATS["hermes"], False
    for tool_format in FORMATS.values():
        if tool_format.renders(template):
            return tool_format, True
    raise UnsupportedTemplateError(
        "the chat template renders tools in a format groundstate cannot parse, so no tool call would ever be "
        f"read and every episode would score 0. Supported formats: {supported}. If the model writes one of "
        "them, name it with tool_format (e.g. local:MODEL?tool_format=hermes, `tool_format:` in a train "
        "recipe or the Verl `groundstate:` settings); see docs/training/chat-formats.md"
    )
