"""Policies: specs and the registry, the Hermes tool-call format, and the real model-backed policies."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import trainer.policies as policies_pkg
from tests.live_server import free_port
from tests.llm_server import LlamaServer
from tests.llm_server import llm_server as llm_server  # the session fixture serving SmolLM2 (llama.cpp)
from trainer.policies import (
    POLICIES,
    STOP_MARK,
    ContextOverflowError,
    Policy,
    PolicyError,
    PolicySpecError,
    ToolCall,
    Turn,
    UnknownNameError,
    load_policy,
    openai_tools,
    parse_spec,
)
from trainer.policies._hermes import parse_tool_calls, to_hermes_messages, tools_prompt
from trainer.policies.base import split_stop
from trainer.policies.openai_chat import OpenAIChatPolicy
from trainer.policies.scripted import RecordedPolicy, ReplayPolicy
from trainer.registry import Registry

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "kind": "read",
        "function": {
            "name": "get_account",
            "description": "Look up an account.",
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string"}},
                "required": ["account_id"],
            },
        },
    }
]


# -- specs and the registry ----------------------------------------------------------------------------------


def test_public_api_resolves_and_keeps_private_modules_private() -> None:
    assert all(hasattr(policies_pkg, name) for name in policies_pkg.__all__)
    assert not [n for n in policies_pkg.__all__ if n.startswith("_")]


@pytest.mark.parametrize(
    ("spec", "kind", "target", "options"),
    [
        ("replay", "replay", "", {}),
        ("replay:?calls_per_turn=2", "replay", "", {"calls_per_turn": "2"}),
        ("openai:gpt-4.1-mini", "openai", "gpt-4.1-mini", {}),
        (
            "openai:Qwen/Qwen2.5-7B@http://127.0.0.1:8001/v1?temperature=0.7&tool_format=hermes",
            "openai",
            "Qwen/Qwen2.5-7B@http://127.0.0.1:8001/v1",
            {"temperature": "0.7", "tool_format": "hermes"},
        ),
        ("local:smollm2?max_new_tokens=64", "local", "smollm2", {"max_new_tokens": "64"}),
        ("recorded:/tmp/turns.json", "recorded", "/tmp/turns.json", {}),
    ],
)
def test_parse_spec_splits_kind_target_and_options(
    spec: str, kind: str, target: str, options: dict[str, str]
) -> None:
    parsed = parse_spec(spec)
    assert (parsed.kind, parsed.target, parsed.options) == (kind, target, options)


@pytest.mark.parametrize("spec", ["", ":model", "openai:m?temperature=1&temperature=2", "openai:m?=x"])
def test_parse_spec_rejects_malformed_specs(spec: str) -> None:
    with pytest.raises(PolicySpecError):
        parse_spec(spec)


def test_unknown_policy_kind_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_policy("gemini:pro")
    assert info.value.known == ["local", "openai", "recorded", "replay"]
    assert "unknown policy 'gemini'" in str(info.value) and "openai" in str(info.value)


def test_openai_spec_builds_the_client_config_without_any_request() -> None:
    policy = load_policy("openai:qwen@http://127.0.0.1:9/v1?temperature=0.5&max_tokens=64&tool_format=hermes")
    assert isinstance(policy, OpenAIChatPolicy)
    assert policy.options.model == "qwen" and policy.options.base_url == "http://127.0.0.1:9/v1"
    assert policy.options.temperature == 0.5 and policy.options.max_tokens == 64
    assert policy.options.tool_format == "hermes" and policy.name == "qwen"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("openai:m?temprature=1", "temprature"),
        ("openai:m?tool_format=xml", "tool_format"),
        ("openai:", "needs a model"),
        ("replay:gold", "takes no target"),
        ("replay?calls_per_turn=0", "calls_per_turn"),
        ("recorded:/nonexistent/turns.json", "cannot read recorded turns"),
        ("local:/nonexistent/model", "no model at"),
    ],
)
def test_invalid_policy_options_name_the_problem(spec: str, fragment: str) -> None:
    with pytest.raises(PolicySpecError, match=fragment):
        load_policy(spec)


def test_invalid_option_message_lists_the_valid_options() -> None:
    with pytest.raises(PolicySpecError) as info:
        load_policy("openai:m?temprature=1")
    assert "temperature" in str(info.value) and "tool_format" in str(info.value)


class Echo(Policy):
    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        return Turn(content=messages[-1]["content"])


def test_registry_decorator_records_a_dotted_path_and_loads_lazily() -> None:
    registry: Registry[Policy] = Registry("policy", Policy)
    registry.register("echo")(Echo)
    assert registry.paths() == {"echo": f"{__name__}:Echo"}
    assert registry.load("echo") is Echo
    registry.add("lazy", "trainer.policies.scripted:ReplayPolicy")
    assert registry.load("lazy") is ReplayPolicy
    with pytest.raises(ValueError, match="already registered"):
        registry.add("echo", "trainer.policies.scripted:ReplayPolicy")


def test_registry_refuses_a_class_of_the_wrong_kind() -> None:
    registry: Registry[Policy] = Registry("policy", Policy, builtins={"bad": "trainer.registry:Registry"})
    with pytest.raises(TypeError, match="not a subclass of Policy"):
        registry.load("bad")


@pytest.fixture
def plugin_site(tmp_path: Path) -> Iterator[Path]:
    site = tmp_path / "site"
    dist = site / "echo_policy-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-policy\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[groundstate.policies]\necho = {__name__}:Echo\n")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield site
    sys.path.remove(str(site))
    importlib.invalidate_caches()


def test_a_third_party_policy_registers_through_an_entry_point(plugin_site: Path) -> None:
    assert "echo" in POLICIES.names()
    assert POLICIES.load("echo") is Echo
    turn = asyncio.run(POLICIES.load("echo")().respond([{"role": "user", "content": "hi"}], []))
    assert turn.content == "hi"


# -- the Hermes text format (recorded model outputs) ---------------------------------------------------------

QWEN_ONE_CALL = (
    "I'll look that up.\n<tool_call>\n"
    '{"name": "get_account", "arguments": {"account_id": "AC-0001"}}\n</tool_call>'
)
QWEN_TWO_CALLS = (
    '<tool_call>\n{"name": "get_account", "arguments": {"account_id": "AC-0001"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_account", "arguments": {"account_id": "AC-0002"}}\n</tool_call>'
)


def test_hermes_parser_reads_a_qwen_call_and_keeps_the_text() -> None:
    content, calls = parse_tool_calls(QWEN_ONE_CALL)
    assert content == "I'll look that up."
    assert [(c.name, c.arguments, c.parse_error) for c in calls] == [
        ("get_account", {"account_id": "AC-0001"}, None)
    ]
    assert calls[0].id.startswith("call_")


def test_hermes_parser_reads_several_calls_in_order_with_distinct_ids() -> None:
    content, calls = parse_tool_calls(QWEN_TWO_CALLS)
    assert content == ""
    assert [c.arguments["account_id"] for c in calls] == ["AC-0001", "AC-0002"]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        # arguments serialised as a JSON string (vLLM-style)
        ('<tool_call>{"name": "f", "arguments": "{\\"x\\": 1}"}</tool_call>', "f", {"x": 1}),
        # the `parameters` key some fine-tunes use
        ('<tool_call>{"name": "f", "parameters": {"x": 2}}</tool_call>', "f", {"x": 2}),
        # generation cut off before the closing tag
        ('<tool_call>\n{"name": "f", "arguments": {"x": 3}}', "f", {"x": 3}),
        # a fenced JSON block inside the tags
        ('<tool_call>\n```json\n{"name": "f", "arguments": {}}\n```\n</tool_call>', "f", {}),
        # no arguments at all
        ('<tool_call>{"name": "count_transfers"}</tool_call>', "count_transfers", {}),
    ],
)
def test_hermes_parser_accepts_common_variants(text: str, name: str, arguments: dict[str, Any]) -> None:
    _, calls = parse_tool_calls(text)
    assert [(c.name, c.arguments, c.parse_error) for c in calls] == [(name, arguments, None)]


def test_hermes_parser_reports_two_objects_in_one_block_as_two_calls() -> None:
    text = '<tool_call>\n{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}\n</tool_call>'
    assert [c.name for c in parse_tool_calls(text)[1]] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "name", "fragment"),
    [
        (
            '<tool_call>{"name": "get_account", "arguments": {"account_id": }}</tool_call>',
            "get_account",
            "JSON",
        ),
        ('<tool_call>{"arguments": {}}</tool_call>', "", '"name"'),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "f", "object"),
        ("<tool_call></tool_call>", "", "empty"),
    ],
)
def test_hermes_parser_turns_unreadable_calls_into_explained_errors(
    text: str, name: str, fragment: str
) -> None:
    _, calls = parse_tool_calls(text)
    assert len(calls) == 1 and calls[0].name == name
    assert calls[0].parse_error is not None and fragment in calls[0].parse_error


def test_text_without_tool_calls_is_left_alone() -> None:
    assert parse_tool_calls("  The transfer is complete.  ") == ("The transfer is complete.", [])


def test_hermes_rendering_puts_tools_in_the_system_prompt_and_results_in_user_turns() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_account", "arguments": '{"account_id": "A"}'},
    }
    messages = [
        {"role": "system", "content": "Be a bank agent."},
        {"role": "user", "content": "Check A and B"},
        {"role": "assistant", "content": "", "tool_calls": [call, {**call, "id": "c2"}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"id": "A"}'},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: Account B not found"},
    ]
    out = to_hermes_messages(messages, TOOLS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("Be a bank agent.\n\n# Tools")
    assert '"kind"' not in out[0]["content"] and '"get_account"' in out[0]["content"]
    assert out[2]["content"].count("<tool_call>") == 2
    assert parse_tool_calls(out[2]["content"])[1][0].arguments == {"account_id": "A"}
    assert out[3]["content"].count("<tool_response>") == 2 and "Account B not found" in out[3]["content"]
    assert all(set(m) == {"role", "content"} for m in out)


def test_tools_prompt_and_openai_tools_drop_our_kind_key() -> None:
    assert openai_tools(TOOLS) == [{"type": "function", "function": TOOLS[0]["function"]}]
    assert "kind" not in tools_prompt(TOOLS)


def test_stop_mark_is_removed_and_reported() -> None:
    assert split_stop(f"Done, transfer complete. {STOP_MARK}") == ("Done, transfer complete.", True)
    assert split_stop("Anything else?") == ("Anything else?", False)


def test_turn_becomes_an_openai_assistant_message() -> None:
    turn = Turn(content="", tool_calls=[ToolCall(id="c1", name="get_account", arguments={"account_id": "A"})])
    assert turn.message() == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_account", "arguments": '{"account_id": "A"}'},
            }
        ],
    }


# -- scripted policies ---------------------------------------------------------------------------------------


def test_recorded_policy_plays_turns_in_order_then_stops(tmp_path: Path) -> None:
    path = tmp_path / "turns.json"
    path.write_text(json.dumps({"turns": [{"content": "hello"}, {"content": "bye", "stop": True}]}))
    policy = load_policy(f"recorded:{path}")
    assert isinstance(policy, RecordedPolicy) and policy.name == "recorded:turns.json"
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    first = asyncio.run(policy.respond(history, []))
    history.append(first.message())
    second = asyncio.run(policy.respond(history, []))
    history.append(second.message())
    third = asyncio.run(policy.respond(history, []))
    assert (first.content, second.content, second.stop) == ("hello", "bye", True)
    assert third.stop and not third.content and not third.tool_calls


def test_unbound_replay_policy_refuses_to_guess_the_task() -> None:
    with pytest.raises(RuntimeError, match="bound to an episode"):
        asyncio.run(ReplayPolicy().respond([], []))


# -- the OpenAI-compatible policy ----------------------------------------------------------------------------


def test_unreachable_openai_endpoint_raises_policy_error() -> None:
    policy = load_policy(f"openai:m@http://127.0.0.1:{free_port()}/v1?max_retries=0&timeout_s=5")

    async def go() -> None:
        try:
            await policy.respond([{"role": "user", "content": "hi"}], TOOLS)
        finally:
            await policy.aclose()

    with pytest.raises(PolicyError, match="APIConnectionError") as info:
        asyncio.run(go())
    assert not isinstance(info.value, ContextOverflowError)


@pytest.mark.slow
def test_openai_policy_against_llama_cpp_records_usage_and_parses_the_reply(llm_server: LlamaServer) -> None:

    messages = [
        {"role": "system", "content": "You are a bank agent. Use the tools to look accounts up."},
        {"role": "user", "content": "What is the balance of account AC-0001?"},
    ]

    async def go(tool_format: str) -> Turn:
        policy = load_policy(
            f"openai:{llm_server.model}@{llm_server.base_url}?max_tokens=48&seed=0&tool_format={tool_format}"
        )
        try:
            return await policy.respond(messages, TOOLS)
        finally:
            await policy.aclose()

    for tool_format in ("auto", "hermes"):
        turn = asyncio.run(go(tool_format))
        assert turn.tokens_in > 20 and 0 < turn.tokens_out <= 48
        assert turn.content or turn.tool_calls
        assert turn.finish_reason in ("stop", "length", "tool_calls")
        assert "<tool_call>" not in turn.content


# -- the local transformers policy ---------------------------------------------------------------------------


@pytest.mark.slow
def test_local_smollm2_keeps_exact_token_ids_and_logprobs() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from trainer.policies.local import LocalPolicy

    policy = load_policy("local:smollm2?max_new_tokens=24")
    assert isinstance(policy, LocalPolicy)
    opening: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful bank agent."},
        {"role": "user", "content": "Hi! What can you do for me?"},
    ]

    async def episode() -> tuple[Turn, Turn]:
        bound = await policy.for_episode(None, None)  # type: ignore[arg-type]  # the local policy needs neither
        messages = list(opening)
        first = await bound.respond(messages, TOOLS)
        messages += [first.message(), {"role": "user", "content": "Please check account AC-0001."}]
        return first, await bound.respond(messages, TOOLS)

    first, second = asyncio.run(episode())
    loaded = asyncio.run(policy.model())
    for turn in (first, second):
        assert turn.token_ids and turn.logprobs and turn.context_ids
        assert len(turn.token_ids) == len(turn.logprobs) == turn.tokens_out <= 24
        assert all(lp <= 0 for lp in turn.logprobs)
    # the second turn's prompt is exactly: first prompt + first output + only the new user message's tokens
    assert second.tokens_in == len(first.context_ids) + len(first.token_ids) + len(second.context_ids)
    new_text = loaded.tokenizer.decode(second.context_ids)
    assert "Please check account AC-0001." in new_text and "helpful bank agent" not in new_text
    # the log-probs are the model's own: one teacher-forced pass over the whole episode (no cache) agrees on
    # both turns (the second was generated from the reused cache), and greedy picked each most likely token
    sequence = first.context_ids + first.token_ids + second.context_ids + second.token_ids
    with torch.no_grad():
        forced = torch.log_softmax(loaded.model(torch.tensor([sequence])).logits[0].float(), dim=-1)
    start = 0
    for turn in (first, second):
        start += len(turn.context_ids)
        rows = forced[start - 1 : start - 1 + len(turn.token_ids)]
        chosen = rows.gather(1, torch.tensor(turn.token_ids)[:, None])[:, 0]
        assert torch.allclose(chosen, torch.tensor(turn.logprobs), atol=1e-3)
        assert rows.argmax(dim=-1).tolist() == turn.token_ids
        start += len(turn.token_ids)
    # another episode with the same system prompt starts from the shared prefix cache and decodes the same
    assert loaded.prefixes
    again, _ = asyncio.run(episode())
    assert again.token_ids == first.token_ids and again.context_ids == first.context_ids
    assert again.logprobs == pytest.approx(first.logprobs, abs=1e-3)


def _recorded_requests(policy: OpenAIChatPolicy, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The requests `policy` sends from now on, each answered "Hello." without a call (no endpoint)."""
    sent: list[dict[str, Any]] = []

    async def create(**request: Any) -> Any:
        sent.append(request)
        message = SimpleNamespace(content="Hello.", tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")], usage=None)

    monkeypatch.setattr(policy._client.chat.completions, "create", create)
    return sent


def test_native_tools_go_with_tool_choice_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama-cpp-python reads a missing `tool_choice` as "none": the policy says "auto" with its tools."""
    policy = load_policy("openai:m@http://127.0.0.1:9/v1?tool_format=native")
    assert isinstance(policy, OpenAIChatPolicy)
    sent = _recorded_requests(policy, monkeypatch)
    asyncio.run(policy.respond([{"role": "user", "content": "hi"}], TOOLS))
    asyncio.run(policy.respond([{"role": "user", "content": "hi"}], []))
    assert sent[0]["tool_choice"] == "auto" and sent[0]["tools"]
    assert "tool_choice" not in sent[1] and "tools" not in sent[1]


def test_schema_bound_caps_what_the_model_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp fails on 4,000-character schema bounds: `schema_bound` caps them in the request only."""
    properties = {"note": {"type": "string", "maxLength": 4000}, "tags": {"type": "array", "maxItems": 50}}
    long = [{"type": "function", "function": {"name": "f", "parameters": {"properties": properties}}}]
    policy = load_policy("openai:m@http://127.0.0.1:9/v1?tool_format=native&schema_bound=1000")
    assert isinstance(policy, OpenAIChatPolicy)
    sent = _recorded_requests(policy, monkeypatch)
    asyncio.run(policy.respond([{"role": "user", "content": "hi"}], long))
    offered = sent[0]["tools"][0]["function"]["parameters"]["properties"]
    assert offered["note"]["maxLength"] == 1000 and offered["tags"]["maxItems"] == 50
    assert properties["note"]["maxLength"] == 4000  # the caller's schema is not mutated


@pytest.mark.slow
def test_loading_a_gguf_model_prints_no_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    from trainer.policies.local import read_model

    read_model("smollm2")
    captured = capfd.readouterr()
    assert "de-quantizing" not in captured.err and "%|" not in captured.err, captured.err[-500:]
