"""Tool-call formats on chat templates of each family: detection, rendering, parsing, refusal.

Each family's chat template (`tests/trainer/chat_templates/`; each file's header says where it comes from) is
put on SmolLM2's real tokenizer, with the family's marker tokens added as special tokens as in its own
tokenizer; calls are rendered by the template, encoded, and parsed back from the ids by `ChatFormat.turn`,
which is what the `local:` policy, `train local`, the warm start and the Verl loop do with generated ids.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

from trainer.policies.base import Message, ToolCall, Turn
from trainer.policies.chat_format import ChatFormat, EpisodeTokens
from trainer.policies.tool_formats import FORMATS, UnsupportedTemplateError, choose_format

TEMPLATES = Path(__file__).parent / "chat_templates"

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "kind": "write",
        "function": {
            "name": "update_order",
            "description": "Change an order's shipping address and items.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": "The order."},
                    "address": {"type": "object", "description": "The new address."},
                    "items": {"type": "array", "description": "Item ids."},
                    "quantity": {"type": "integer"},
                    "gift": {"type": "boolean"},
                    "note": {"type": "string"},
                },
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "kind": "read",
        "function": {
            "name": "get_order",
            "description": "Read an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    },
]
NESTED = {
    "order_id": "#W2611340",
    "address": {"street": "Straße 5, Café Ünïcødé", "city": "東京", "lines": ["a", {"b": [1, 2.5, None]}]},
    "items": ["1008292230", "9612497925"],
    "quantity": 3,
    "gift": True,
    "note": 'emoji 😀 and "quotes"',
}
SECOND = {"order_id": "123"}  # a string of digits stays a string (typed by the schema where untyped)
BOTH = [("update_order", NESTED), ("get_order", SECOND)]
CONVERSATION: list[Message] = [
    {"role": "system", "content": "You are the shop's agent."},
    {"role": "user", "content": "Please change my order."},
]

FAMILIES = {
    # format: (template file, the marker tokens its tokenizer has as special tokens, parallel in the template)
    "hermes": ("qwen2_5_hermes.jinja", [], True),
    "llama3_json": (
        "llama3_1_json.jinja",
        ["<|python_tag|>", "<|eot_id|>", "<|eom_id|>", "<|start_header_id|>", "<|end_header_id|>"],
        False,
    ),
    "mistral": (
        "mistral_v0_3.jinja",
        ["[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"],
        True,
    ),
    "qwen3_coder": ("qwen3_coder_xml.jinja", [], True),
}


@pytest.fixture(scope="module")
def smollm2_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from trainer.policies.local import resolve_model

    directory, gguf = resolve_model("smollm2")
    return AutoTokenizer.from_pretrained(directory, gguf_file=gguf)


def family_tokenizer(base: Any, name: str) -> Any:
    template, specials, _ = FAMILIES[name]
    specials = [*specials, "[INST]", "[/INST]"] if name == "mistral" else specials
    tokenizer = copy.deepcopy(base)
    tokenizer.chat_template = (TEMPLATES / template).read_text()
    if specials:
        tokenizer.add_special_tokens({"additional_special_tokens": specials})
    return tokenizer


def call_message(*arguments: dict[str, Any]) -> Message:
    names = ["update_order", "get_order"]
    return Turn(
        tool_calls=[ToolCall(id=f"call_{i}", name=names[i], arguments=a) for i, a in enumerate(arguments)]
    ).message()


def generated(fmt: ChatFormat, text: str) -> list[int]:
    """The ids a model emitting `text` then its end of turn would have sampled."""
    return [*fmt.encode(text), fmt.end_of_turn_id]


@pytest.mark.parametrize("name", list(FAMILIES))
def test_each_family_is_detected_from_its_template_and_renders_tools(
    smollm2_tokenizer: Any, name: str
) -> None:
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
    assert (fmt.tool_format.name, fmt.native_tools) == (name, True)
    prompt = fmt.render(CONVERSATION, TOOLS, generation_prompt=True)
    assert "update_order" in prompt and "get_order" in prompt and "Please change my order." in prompt
    assert "kind" not in prompt  # our own key stays ours


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_call_rendered_by_the_template_parses_back_from_its_ids(smollm2_tokenizer: Any, name: str) -> None:
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
    target = fmt.assistant_text(CONVERSATION, TOOLS, call_message(NESTED))  # the warm start's target
    turn = fmt.turn(fmt.encode(target), None, context_ids=[], tokens_in=0, tools=TOOLS)
    assert [(c.name, c.arguments, c.parse_error) for c in turn.tool_calls] == [("update_order", NESTED, None)]
    assert turn.finish_reason == "tool_calls" and turn.content == ""


@pytest.mark.parametrize("name", [n for n, (_, _, parallel) in FAMILIES.items() if parallel])
def test_parallel_calls_rendered_by_the_template_parse_back(smollm2_tokenizer: Any, name: str) -> None:
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
    target = fmt.assistant_text(CONVERSATION, TOOLS, call_message(NESTED, SECOND))
    turn = fmt.turn(fmt.encode(target), None, context_ids=[], tokens_in=0, tools=TOOLS)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == BOTH
    assert len({c.id for c in turn.tool_calls}) == 2


def test_llama_reads_python_tag_calls_and_several_json_objects(smollm2_tokenizer: Any) -> None:
    """Llama's template renders one call per turn; the model may still write several, or use the tag."""
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, "llama3_json"))
    first = json.dumps({"name": "update_order", "parameters": NESTED}, ensure_ascii=False)
    second = json.dumps({"name": "get_order", "parameters": SECOND})
    for text in (f"Let me do both.<|python_tag|>{first}; {second}", f"{first}\n{second}"):
        turn = fmt.turn(generated(fmt, text), None, context_ids=[], tokens_in=0, tools=TOOLS)
        assert [(c.name, c.arguments) for c in turn.tool_calls] == BOTH
    tagged = fmt.turn(
        generated(fmt, "Let me do both.<|python_tag|>" + first), None, context_ids=[], tokens_in=0
    )
    assert tagged.content == "Let me do both."


def test_a_plain_reply_is_not_a_call_in_any_family(smollm2_tokenizer: Any) -> None:
    for name in FAMILIES:
        fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
        for text in ("Your order is updated, café 😀.", "{braces} in a reply"):
            turn = fmt.turn(generated(fmt, text), None, context_ids=[], tokens_in=0, tools=TOOLS)
            assert (turn.content, turn.tool_calls, turn.finish_reason) == (text, [], "stop"), name


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("hermes", '<tool_call>{"name": "get_order", "arguments": {"order_id": </tool_call>'),
        ("llama3_json", '<|python_tag|>{"name": "get_order", "parameters": {"order_id": '),
        ("mistral", '[TOOL_CALLS] [{"name": "get_order", "arguments": {"order_id": '),
        ("qwen3_coder", "<tool_call>\n<parameter=order_id>\n1\n</parameter>\n</tool_call>"),
    ],
)
def test_a_broken_call_becomes_an_explained_error(smollm2_tokenizer: Any, name: str, text: str) -> None:
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
    turn = fmt.turn(generated(fmt, text), None, context_ids=[], tokens_in=0, tools=TOOLS)
    assert len(turn.tool_calls) == 1 and turn.tool_calls[0].parse_error


@pytest.mark.parametrize("name", list(FAMILIES))
def test_an_episode_grows_by_tool_results_and_user_replies(smollm2_tokenizer: Any, name: str) -> None:
    """The token transcript appends what follows each turn as the family's template writes it."""
    fmt = ChatFormat.of(family_tokenizer(smollm2_tokenizer, name))
    tokens = EpisodeTokens(fmt)
    tokens.add_context(tokens.context(CONVERSATION, TOOLS))
    reply = fmt.assistant_text(CONVERSATION, TOOLS, call_message(SECOND))
    turn = fmt.turn(fmt.encode(reply), None, context_ids=[], tokens_in=0, tools=TOOLS)
    tokens.add_generated(turn.token_ids or [], seen=len(CONVERSATION))
    call = turn.tool_calls[0]
    messages = [
        *CONVERSATION,
        turn.message(),
        {"role": "tool", "tool_call_id": call.id, "content": '{"status": "pending", "city": "東京"}'},
    ]
    after_result = fmt.tokenizer.decode(tokens.context(messages, TOOLS))
    assert "pending" in after_result and "東京" in after_result and "update_order" not in after_result
    tokens.add_context(tokens.context(messages, TOOLS))
    tokens.add_generated(generated(fmt, "Shall I go ahead?"), seen=len(messages))
    messages.append({"role": "assistant", "content": "Shall I go ahead?"})
    messages.append({"role": "user", "content": "Yes, do."})
    after_user = fmt.tokenizer.decode(tokens.context(messages, TOOLS))
    assert "Yes, do." in after_user and "shop's agent" not in after_user and "update_order" not in after_user


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_template_without_tools_gets_them_as_text(smollm2_tokenizer: Any, name: str) -> None:
    """SmolLM2's template knows no tools: a named format is rendered as text, and round-trips."""
    fmt = ChatFormat.of(smollm2_tokenizer, tool_format=name)
    assert (fmt.tool_format.name, fmt.native_tools) == (name, False)
    assert "update_order" in fmt.render(CONVERSATION, TOOLS, generation_prompt=True)
    target = fmt.assistant_text(CONVERSATION, TOOLS, call_message(NESTED, SECOND))
    turn = fmt.turn(fmt.encode(target), None, context_ids=[], tokens_in=0, tools=TOOLS)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == BOTH
    assert ChatFormat.of(smollm2_tokenizer).tool_format.name == "hermes"  # the default for such templates


def test_an_unsupported_template_is_refused_naming_the_supported_formats(smollm2_tokenizer: Any) -> None:
    harmony = (  # gpt-oss style: tools in a TypeScript namespace, calls on a commentary channel
        "{%- for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{%- endfor %}"
        "{%- if tools %}<|start|>developer<|message|>namespace functions {"
        "{%- for t in tools %}type {{ t.function.name }} = () => any;{%- endfor %}}<|end|>{%- endif %}"
        "{%- if add_generation_prompt %}<|start|>assistant{%- endif %}"
    )
    tokenizer = copy.deepcopy(smollm2_tokenizer)
    tokenizer.chat_template = harmony
    with pytest.raises(UnsupportedTemplateError) as refused:
        ChatFormat.of(tokenizer)
    assert all(name in str(refused.value) for name in FORMATS) and "tool_format" in str(refused.value)
    assert ChatFormat.of(tokenizer, tool_format="hermes").tool_format.name == "hermes"  # named: used as told
    with pytest.raises(UnsupportedTemplateError, match="unknown tool_format 'harmony'"):
        choose_format(tokenizer.chat_template, "harmony")
    with pytest.raises(UnsupportedTemplateError, match="no chat template"):
        choose_format(None)
