"""A policy whose endpoint fails is named in every summary, never scored as the agent's 0 (issue #32).

The failing endpoint is a real HTTP server answering as llama.cpp does when a prompt exceeds its context
(`tests.llm_server.edge_app`), and, marked slow, real SmolLM2 on llama.cpp with a context too small for
the task's first prompt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.hotel import domain as hotel
from env_server.settings import Settings
from groundstate.cli import app
from shared.client import AsyncGroundstateClient
from tests.live_server import serve
from tests.llm_server import EdgeScript, LlamaServer, edge_app, start_or_skip
from tests.toy_domain import domain as toy_domain
from trainer.policies import load_policy
from trainer.results import read_results
from trainer.rollout import run_rollout
from trainer.rollout_models import EndReason, RolloutResult

runner = CliRunner()

#: What an OpenAI-compatible server (vLLM, llama.cpp's OpenAI layer) answers for a prompt over its context.
TOO_LONG = "This model's maximum context length is 2048 tokens. However, you requested 3030 tokens."


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([toy_domain]))) as url:
        yield url


@pytest.fixture
def too_small() -> Iterator[str]:
    """A model endpoint whose context is too small for any prompt: every request gets HTTP 400."""
    body = {"error": {"message": TOO_LONG, "type": "invalid_request_error", "code": 400}}
    with serve(edge_app(EdgeScript((400, body)))) as url:
        yield f"{url}/v1"


def test_a_campaign_against_a_failing_endpoint_names_it_and_stops_early(
    server: str, too_small: str, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    args = ["eval", "--policy", f"openai:m@{too_small}?max_retries=0", "--server", server]
    args += ["--tasks", "toybank-transfer-001", "--trials", "20", "--concurrency", "2", "--retries", "0"]
    result = runner.invoke(app, [*args, "--out", str(run), "--quiet"])
    assert result.exit_code == 1, result.output
    assert "0 solved, 0 backend errors" in result.output and "policy errors" in result.output
    assert "the model never played (not counted in pass@1)" in result.output
    assert "maximum context length is 2048 tokens" in result.output  # the cause, in the summary
    assert "stopped early" in result.output
    lines = read_results(run)
    assert 8 <= len(lines) < 20  # stopped once most of the first eight failed, not after all twenty
    assert {(r.status, r.reward) for r in lines} == {("policy_error", None)}
    summary = json.loads((run / "run.json").read_text())["invocations"][-1]["summary"]
    assert summary["policy_errors"] == len(lines) and "stopped early" in summary["stopped"]

    metrics = runner.invoke(app, ["metrics", str(run), "--json"])
    assert metrics.exit_code == 0, metrics.output
    figures = json.loads(metrics.output)
    assert (figures["policy_errors"], figures["trials"], figures["pass@1"]) == (len(lines), 0, None)

    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    html = (run / "report.html").read_text()
    top = html.split("<h2>")[0]  # before the first section: the warning leads
    assert f"{len(lines)} trials ended in policy errors" in top and "maximum context length" in top


def test_a_context_overflow_after_the_first_turn_is_the_agents_end(server: str, tmp_path: Path) -> None:
    # the first turn fits and acts; the second prompt is over the context: the agent's conversation ended
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_account", "arguments": '{"account_id": "AC-0001"}'},
    }
    first = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ],
    }
    over = (400, {"error": {"message": TOO_LONG, "type": "invalid_request_error", "code": 400}})
    with serve(edge_app(EdgeScript((200, first), over))) as url:
        result = _rollout(server, f"openai:m@{url}/v1?max_retries=0")
    assert (result.status, result.reward, result.end_reason) == ("scored", 0, EndReason.CONTEXT_OVERFLOW)


def _rollout(server: str, spec: str, task_id: str = "toybank-transfer-001") -> RolloutResult:
    async def go() -> RolloutResult:
        policy = load_policy(spec)
        async with AsyncGroundstateClient(server) as client:
            try:
                return await run_rollout(client, policy, task_id)
            finally:
                await policy.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def small_context() -> Iterator[LlamaServer]:
    """Real SmolLM2 on llama.cpp at the 2048-token context the test servers use, tools in the prompt."""
    yield from start_or_skip(n_ctx=2048, chat_format="chatml-function-calling")


@pytest.mark.slow
def test_a_real_llama_cpp_server_too_small_for_the_prompt_is_a_policy_error(
    tmp_path: Path, small_context: LlamaServer
) -> None:
    # hotel's policy and tools take about 7,000 tokens: they cannot fit 2048 (docs/evaluation: context)
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([hotel]))) as server:
        spec = f"openai:{small_context.model}@{small_context.base_url}?max_retries=0"
        result = _rollout(server, spec, "hotel-analytics-001")
    assert (result.status, result.reward, result.end_reason) == ("policy_error", None, EndReason.POLICY_ERROR)
    assert result.error is not None and "does not fit the model's context" in result.error
    assert "maximum context length is 2048 tokens" in result.error and result.turns == []


def reporting_app(props: dict[str, Any] | None, models: dict[str, Any]) -> FastAPI:
    """An endpoint reporting its context as llama.cpp's server (`/props`) or vLLM (`/v1/models`) do."""
    app = FastAPI()
    if props is not None:
        app.get("/props")(lambda: props)
    app.get("/v1/models")(lambda: models)
    return app


LLAMA_CPP = (
    {"default_generation_settings": {"n_ctx": 2048}},
    {"data": [{"id": "m", "meta": {"n_ctx_train": 8192}}]},
)
VLLM = (None, {"object": "list", "data": [{"id": "m", "object": "model", "max_model_len": 2048}]})


@pytest.mark.parametrize("reports", [LLAMA_CPP, VLLM], ids=["llama.cpp", "vllm"])
def test_eval_refuses_a_served_context_smaller_than_the_domains_prompt(
    reports: tuple[dict[str, Any] | None, dict[str, Any]], tmp_path: Path
) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    registry = DomainRegistry([toy_domain, hotel])
    with serve(create_app(settings, registry=registry)) as server, serve(reporting_app(*reports)) as model:
        args = ["eval", "--policy", f"openai:m@{model}/v1", "--server", server, "--limit", "1", "--quiet"]
        refused = runner.invoke(app, [*args, "--out", str(tmp_path / "both")])
        toy = ["--domains", "toybank", "--trials", "1", "--retries", "0", "--out", str(tmp_path / "toy")]
        toy_only = runner.invoke(app, [*args, *toy])
    assert refused.exit_code == 1
    assert "serves a context of 2048 tokens, but domain hotel's first prompt" in refused.output
    assert not (tmp_path / "both" / "results.jsonl").exists()  # refused before any trial
    # the toy domain's prompt fits: the campaign runs (its trial fails: this endpoint serves no chat)
    assert "serves a context" not in toy_only.output and "1 policy errors" in toy_only.output
