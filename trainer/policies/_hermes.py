"""The Hermes / Qwen tool-call text format, for models and servers without native tool calling.

The model sees its tools inside `<tools></tools>` in the system prompt and calls one by writing
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; results come back in a user message wrapped in
`<tool_response></tool_response>`. This is what Qwen2.5's chat template renders natively; here it is done
in text so any chat model can use it, and `parse_tool_calls` reads the calls back out of generated text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trainer.policies.base import Message, ToolCall, new_call_id, openai_tools

__all__ = [
    "call_of",
    "decoded_arguments",
    "json_objects",
    "parse_tool_calls",
    "to_hermes_messages",
    "tools_prompt",
]

_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def tools_prompt(tools: list[dict[str, Any]]) -> str:
    """The system-prompt section that describes the tools and the call format (Qwen2.5's wording)."""
    lines = "\n".join(json.dumps(t, ensure_ascii=False) for t in openai_tools(tools))
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{lines}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def parse_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """Read `<tool_call>` blocks out of generated text.

    A block may hold one JSON object or several in a row; `arguments` (or `parameters`) may be an object
    or a JSON string of one; a block left open at the end of the text (generation cut off) still counts.
    A block that cannot be read becomes a call with `parse_error` set, so the model learns why.

    Args:
        text: The model's text.

    Returns:
        The text with every block removed (stripped), and the calls in order.
    """
    calls: list[ToolCall] = []
    for match in _BLOCK.finditer(text):
        calls.extend(_calls_in(match.group(1)))
    content = _BLOCK.sub("", text).strip() if calls else text.strip()
    return content, calls


def _calls_in(block: str) -> list[ToolCall]:
    body = _FENCE.sub("", block.strip())
    if not body:
        return [ToolCall(id=new_call_id(), name="", parse_error="empty <tool_call> block")]
    try:
        objects = json_objects(body)
    except json.JSONDecodeError as exc:
        name = _NAME.search(body)
        return [
            ToolCall(
                id=new_call_id(),
                name=name.group(1) if name else "",
                parse_error=f"the tool call is not valid JSON ({exc.msg} at character {exc.pos}): "
                f'write <tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>',
            )
        ]
    return [call_of(obj) for obj in objects]


def json_objects(body: str, separators: str = " \t\r\n,") -> list[Any]:
    """The JSON values written one after another in `body`, apart by any of `separators`.

    Raises:
        json.JSONDecodeError: Some part of `body` is not JSON.
    """
    decoder = json.JSONDecoder()
    objects: list[Any] = []
    position = 0
    while position < len(body) and body[position] in separators:
        position += 1
    while position < len(body):
        obj, end = decoder.raw_decode(body, position)
        objects.append(obj)
        position = end
        while position < len(body) and body[position] in separators:
            position += 1
    return objects


def call_of(obj: Any) -> ToolCall:
    """A call from a decoded `{"name": ..., "arguments" (or "parameters"): {...}}`, or an explained error."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return ToolCall(
            id=new_call_id(), name="", parse_error='a tool call needs a JSON object with a string "name"'
        )
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(
                id=new_call_id(), name=obj["name"], parse_error=f"the arguments are not valid JSON: {exc.msg}"
            )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolCall(id=new_call_id(), name=obj["name"], parse_error="the arguments must be a JSON object")
    return ToolCall(id=new_call_id(), name=obj["name"], arguments=arguments)


def to_hermes_messages(messages: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
    """Rewrite an OpenAI-format conversation into plain system/user/assistant text in the Hermes format.

    The tools are appended to the system prompt, each assistant tool call becomes a `<tool_call>` block in
    the assistant's text, and each run of tool results becomes one user message of `<tool_response>` blocks.

    Args:
        messages: The conversation (OpenAI format, system message first if any).
        tools: The episode's tools.

    Returns:
        A new list of messages with only `role` and `content`.
    """
    out: list[Message] = []
    for message in messages:
        role = message["role"]
        content = message.get("content") or ""
        if role == "system":
            content = f"{content}\n\n{tools_prompt(tools)}" if tools else content
            out.append({"role": "system", "content": content})
        elif role == "assistant":
            blocks = [
                "<tool_call>\n"
                + json.dumps(
                    {
                        "name": c["function"]["name"],
                        "arguments": decoded_arguments(c["function"]["arguments"]),
                    },
                    ensure_ascii=False,
                )
                + "\n</tool_call>"
                for c in message.get("tool_calls") or []
            ]
            out.append({"role": "assistant", "content": "\n".join([content, *blocks]).strip()})
        elif role == "tool":
            block = f"<tool_response>\n{content}\n</tool_response>"
            if out and out[-1]["role"] == "user" and out[-1].get("_tool"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "_tool": True})
        else:
            out.append({"role": role, "content": content})
    if tools and (not out or out[0]["role"] != "system"):
        out.insert(0, {"role": "system", "content": tools_prompt(tools)})
    return [{"role": m["role"], "content": m["content"]} for m in out]


def decoded_arguments(raw: Any) -> Any:
    """Tool-call arguments as an object when they are a JSON string of one (else as given)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw
