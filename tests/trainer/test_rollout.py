"""The rollout runner against a real server (uvicorn on loopback, toy bank domain, SQLite sandboxes)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient
from shared.errors import ApiError
from tests.live_server import free_port, serve
from tests.llm_server import LlamaServer
from tests.llm_server import llm_server as llm_server  # the session fixture serving SmolLM2 (llama.cpp)
from tests.toy_domain import domain as toy_domain
from trainer.policies import Policy, Turn, load_policy
from trainer.policies.scripted import RecordedPolicy, ReplayPolicy
from trainer.rollout import run_rollout
from trainer.rollout_models import EndReason, RolloutConfig, RolloutResult


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


@pytest.fixture
def black_hole() -> Iterator[str]:
    """An OpenAI base URL whose socket accepts connections and never answers: a stuck endpoint."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def rollout(url: str, policy: Policy, task_id: str, **config: Any) -> RolloutResult:
    async def go() -> RolloutResult:
        async with AsyncGroundstateClient(url) as client:
            return await run_rollout(client, policy, task_id, RolloutConfig(**config))

    return asyncio.run(go())


async def _score(url: str, episode_id: str) -> None:
    async with AsyncGroundstateClient(url) as client:
        await client.score(episode_id)


def episode_events(url: str, episode_id: str) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with AsyncGroundstateClient(url) as client:
            info = await client.episode(episode_id)
        return [{"kind": e.kind, **e.payload} for e in info.events]

    return asyncio.run(go())


def test_replay_solves_a_transfer_task_and_records_every_step(server: str) -> None:
    result = rollout(server, ReplayPolicy(), "toybank-transfer-001")
    # the closing message says the communicate item and stops; the scripted user answers its second line
    assert (result.status, result.reward, result.end_reason) == ("scored", 1, EndReason.AGENT_STOP)
    assert result.domain == "toybank" and result.policy == "replay" and result.error is None
    assert len(result.turns) == 3 and result.tool_calls == 2
    roles = [m["role"] for m in result.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert result.messages[0]["content"] == toy_domain.policy
    assert result.messages[3]["tool_call_id"] == result.messages[2]["tool_calls"][0]["id"]
    assert json.loads(result.messages[3]["content"])["id"] == "AC-0001"
    assert "complete" in result.messages[6]["content"] and result.messages[7]["content"] == "Thanks!"
    kinds = [e.kind for e in result.events]
    assert kinds[0] == "episode_started" and kinds[-1] == "scored"
    assert kinds.count("policy_turn") == 3 and kinds.count("tool_call") == 2
    assert [e.t for e in result.events] == sorted(e.t for e in result.events)
    # the server recorded exactly the calls the rollout made
    assert result.episode_id is not None
    server_calls = [e for e in episode_events(server, result.episode_id) if e["kind"] == "tool_call"]
    assert [(e["name"], e["arguments"]) for e in server_calls] == [
        ("get_account", {"account_id": "AC-0001"}),
        ("transfer", {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 5000, "memo": "rent"}),
    ]
    line = result.to_trial(split="test", trial=2)
    assert (line.task_id, line.trial, line.sample, line.status, line.reward) == (
        "toybank-transfer-001",
        2,
        0,
        "scored",
        1,
    )
    assert line.turns == 3 and line.tool_calls == 2 and line.episode_id == result.episode_id
    assert line.failed_checks == [] and line.diff == []
    # the results line keeps what the reward was graded against; the score keeps each call's credit
    assert result.score is not None and line.grading == result.score.grading and line.grading is not None
    task = next(t for t in toy_domain.tasks if t.id == "toybank-transfer-001")
    assert line.grading.task_fingerprint == task.fingerprint
    credit = result.score.credit
    assert credit is not None and [c.label for c in credit.calls] == ["no-effect", "needed"]


def test_replay_answers_an_analytics_task_through_sql(server: str) -> None:
    result = rollout(server, ReplayPolicy(), "toybank-analytics-004")
    assert (result.status, result.reward) == ("scored", 1)
    assert [c["function"]["name"] for m in result.messages for c in m.get("tool_calls", [])] == [
        "sql_query",
        "submit_answer",
    ]
    assert result.score is not None and any(c.name == "answer" and c.passed for c in result.score.checks)


def test_several_calls_in_one_turn_run_in_order(server: str) -> None:
    result = rollout(server, load_policy("replay?calls_per_turn=5"), "toybank-transfer-001")
    assert (result.reward, len(result.turns), result.tool_calls) == (1, 2, 2)


def test_agent_mistakes_go_back_to_the_model_and_the_episode_goes_on(server: str, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"id": "c1", "name": "wire_money", "arguments": {}}]},
        {"tool_calls": [{"id": "c2", "name": "set_balance", "arguments": {"account_id": "AC-0001"}}]},
        {
            "tool_calls": [
                {"id": "c3", "name": "get_account", "parse_error": "the tool call is not valid JSON"}
            ]
        },
        {"tool_calls": [{"id": "c4", "name": "get_account", "arguments": {"account_id": "AC-9999"}}]},
        {"content": "Sorry, I could not do it.", "stop": True},
    ]
    path = tmp_path / "turns.json"
    path.write_text(json.dumps(turns))
    result = rollout(server, load_policy(f"recorded:{path}"), "toybank-transfer-001")
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.AGENT_STOP)
    assert result.tool_calls == 4
    outcomes = [(e.data["name"], e.data["outcome"]) for e in result.events if e.kind == "tool_call"]
    assert outcomes == [
        ("wire_money", "unknown-tool"),
        ("set_balance", "invalid-arguments"),
        ("get_account", "unparsable"),
        ("get_account", "error"),
    ]
    replies = {m["tool_call_id"]: m["content"] for m in result.messages if m["role"] == "tool"}
    assert (
        replies["c1"].startswith("Error: ") and "wire_money" in replies["c1"] and "transfer" in replies["c1"]
    )
    assert replies["c2"].startswith("Error: ") and "balance_cents" in replies["c2"]
    assert replies["c3"] == "Error: the tool call is not valid JSON"
    assert replies["c4"] == "Error: Account AC-9999 not found"
    assert result.score is not None and result.score.diff, "the missing transfer shows in the diff"
    line = result.to_trial(split="test", trial=0)
    assert {c.name for c in line.failed_checks} >= {"state", "communicate:complete"}


def test_oversized_requests_are_the_agents_mistakes_not_a_stopped_campaign(tmp_path: Path) -> None:
    """A runaway policy: a tool argument over the body limit (413), then a message over the length limit."""
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", max_request_bytes=4096)
    turns = [
        {"tool_calls": [{"id": "c1", "name": "get_account", "arguments": {"account_id": "x" * 5000}}]},
        {"content": "y" * 32_001},
    ]
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        result = rollout(url, RecordedPolicy([Turn.model_validate(t) for t in turns]), "toybank-transfer-001")
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.INVALID_MESSAGE)
    outcomes = [e.data["outcome"] for e in result.events if e.kind == "tool_call"]
    assert outcomes == ["request-too-large"]
    refused = [e.data for e in result.events if e.kind == "assistant_message"]
    assert len(refused) == 1 and "32000" in refused[0]["refused"].replace(",", "")


def test_any_model_output_becomes_text_or_a_tool_error_never_an_exception(server: str) -> None:
    """Lone surrogates, control characters, odd ids and deep arguments: the model reads why, and plays on."""
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    turns = [
        {"tool_calls": [{"id": "c1", "name": "get_\ud800account", "arguments": {}}]},
        {"tool_calls": [{"id": "c\x00\ud800", "name": "get_account", "arguments": {"account_id": "AC-1"}}]},
        {"tool_calls": [{"id": "c3", "name": "get_account", "arguments": {"account_id": "AC\udfff"}}]},
        {"tool_calls": [{"id": "c4", "name": "get_account", "arguments": {"account_id": deep}}]},
        {"content": "Hello \ud800 there\x07", "stop": True},
    ]
    result = rollout(server, RecordedPolicy([Turn.model_validate(t) for t in turns]), "toybank-transfer-001")
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.AGENT_STOP)
    outcomes = [e.data["outcome"] for e in result.events if e.kind == "tool_call"]
    assert outcomes == ["unparsable", "error", "unparsable", "unparsable"]  # c2: AC-1 not found
    replies = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert "surrogate" in replies[0] and "surrogate" in replies[2] and "deeper" in replies[3]
    said = [e.data["content"] for e in result.events if e.kind == "assistant_message"]
    assert said == ["Hello \ufffd there"]
    result.model_dump_json()  # the whole record serialises: nothing unencodable was kept


def test_turn_limit_ends_and_scores_the_episode(server: str, tmp_path: Path) -> None:
    look = {"tool_calls": [{"id": "c", "name": "get_account", "arguments": {"account_id": "AC-0001"}}]}
    path = tmp_path / "turns.json"
    path.write_text(json.dumps([look] * 10))
    result = rollout(server, load_policy(f"recorded:{path}"), "toybank-transfer-001", max_turns=3)
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.MAX_TURNS)
    assert len(result.turns) == 3 and result.error == "turn limit of 3 reached"


def test_empty_turn_ends_the_conversation(server: str) -> None:
    result = rollout(server, RecordedPolicy([Turn()]), "toybank-refuse-frozen-002")
    # an agent that says nothing fails even a refusal: it never told the customer the account is frozen
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.EMPTY_TURN)


def test_a_backend_error_in_scoring_is_reported_not_a_zero(server: str) -> None:
    result = rollout(server, ReplayPolicy(), "toybank-judge-003")  # rubric task; the server has no judge
    assert (result.status, result.reward) == ("backend_error", None)
    assert result.error is not None and "no judge is configured" in result.error
    line = result.to_trial(split="test", trial=0)
    assert (line.status, line.reward) == ("backend_error", None)


def test_an_unreachable_policy_endpoint_is_a_policy_error_and_frees_the_episode(server: str) -> None:
    policy = load_policy(f"openai:m@http://127.0.0.1:{free_port()}/v1?max_retries=0")
    result = rollout(server, policy, "toybank-transfer-001")
    assert (result.status, result.reward, result.end_reason) == (
        "policy_error",
        None,
        EndReason.POLICY_ERROR,
    )
    assert (
        result.error is not None
        and result.error.startswith("policy m: ")
        and "APIConnectionError" in result.error
    )
    assert result.episode_id is not None and result.turns == []
    with pytest.raises(ApiError) as info:
        asyncio.run(_score(server, result.episode_id))
    assert info.value.code == "episode-disposed", "the unscored episode was disposed of"


def test_a_stuck_policy_endpoint_times_out_as_a_backend_error(server: str, black_hole: str) -> None:
    policy = load_policy(f"openai:m@{black_hole}?max_retries=0&timeout_s=60")
    started = time.monotonic()
    result = rollout(server, policy, "toybank-transfer-001", timeout_s=1.0)
    assert time.monotonic() - started < 10
    assert (result.status, result.reward, result.end_reason) == ("backend_error", None, EndReason.TIMEOUT)
    assert result.error == "episode timed out after 1 s in policy"
    assert result.events[-1].kind == "failed"


def test_an_unreachable_server_is_a_backend_error_before_any_episode() -> None:
    result = rollout(f"http://127.0.0.1:{free_port()}", ReplayPolicy(), "toybank-transfer-001")
    assert (result.status, result.episode_id, result.domain) == ("backend_error", None, None)
    assert result.error is not None and result.error.startswith("server: POST /v1/episodes")
    with pytest.raises(ValueError, match="pass its domain"):
        result.to_trial(split="test", trial=0)
    assert result.to_trial(split="test", trial=0, domain="toybank").status == "backend_error"


def test_configuration_errors_are_raised_not_recorded(server: str) -> None:
    with pytest.raises(ApiError) as info:
        rollout(server, ReplayPolicy(), "toybank-no-such-task")
    assert (info.value.status, info.value.code) == (404, "unknown-task")


def test_token_sequence_and_loss_mask_concatenate_the_turns() -> None:
    turns = [
        Turn(content="a", context_ids=[1, 2, 3], token_ids=[4, 5], logprobs=[-0.1, -0.2]),
        Turn(content="b", context_ids=[6], token_ids=[7], logprobs=[-0.3]),
    ]
    result = RolloutResult(
        task_id="t", policy="p", status="scored", reward=0, end_reason=EndReason.USER_DONE, turns=turns
    )
    assert result.token_ids() == [1, 2, 3, 4, 5, 6, 7]
    assert result.loss_mask() == [0, 0, 0, 1, 1, 0, 1]
    assert (result.tokens_in, result.tokens_out) == (0, 0)
    text_only = result.model_copy(update={"turns": [Turn(content="x")]})
    with pytest.raises(ValueError, match="not token-level"):
        text_only.token_ids()


@pytest.mark.slow
@pytest.mark.parametrize("tool_format", ["auto", "hermes"])
def test_openai_policy_plays_a_whole_episode_against_llama_cpp(
    server: str, llm_server: LlamaServer, tool_format: str
) -> None:
    spec = f"openai:{llm_server.model}@{llm_server.base_url}?max_tokens=48&seed=0&tool_format={tool_format}"
    policy = load_policy(spec)
    result = rollout(server, policy, "toybank-transfer-001", max_turns=4, user="scripted")
    assert result.status == "scored" and result.score is not None, result.error
    assert result.reward == result.score.reward == int(all(c.passed for c in result.score.checks))
    assert result.end_reason in (EndReason.USER_DONE, EndReason.MAX_TURNS, EndReason.AGENT_STOP)
    assert result.turns and all(t.tokens_in > 0 for t in result.turns)
    assert result.tokens_out == sum(t.tokens_out for t in result.turns) > 0
    assert result.to_trial(split="test", trial=0).policy == llm_server.model


def test_rollout_and_campaign_modules_import_on_a_bare_cpu_box() -> None:
    code = (
        "import sys, trainer.rollout, trainer.evaluate, trainer.policies.local, trainer.cli\n"
        "from trainer.policies import load_policy\n"
        "load_policy('local:smollm2'), load_policy('replay')\n"
        "banned = ('torch', 'transformers', 'env_server', 'verl', 'vllm')\n"
        "leaked = sorted({m.split('.')[0] for m in sys.modules} & set(banned))\n"
        "assert not leaked, leaked"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
