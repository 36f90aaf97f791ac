"""The model gateway end to end: an unmodified OpenAI Agents SDK program plays a task through it, the
recorded tokens are exact, and one TRL GRPO step trains on them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.client import AsyncGroundstateClient
from tests.live_server import serve
from tests.trainer.adapters.conftest import TASK, StoppableServer
from tests.trainer.gateway.agent_program import run_agent_program
from tests.trainer.scripted_model import reference_texts, scripted_model, smollm2_tokenizer
from trainer.gateway import (
    CallRecorder,
    Generation,
    LocalBackend,
    create_gateway_app,
    episode_row,
    samples_from_calls,
)
from trainer.gateway.collect import GatewayEpisode, collect_episode
from trainer.policies.local import LocalOptions


def _play(server: str, gateway: str) -> tuple[str, dict[str, Any]]:
    """Start an episode, run the agent program on it, score it; returns the episode id and the score."""
    started = httpx.post(f"{server}/v1/episodes", json={"task_id": TASK}).raise_for_status().json()
    episode = started["episode_id"]
    asyncio.run(
        run_agent_program(
            model_url=f"{gateway}/episodes/{episode}/v1",
            mcp_url=f"{server}/v1/episodes/{episode}/mcp",
            episode_url=f"{server}/v1/episodes/{episode}",
            instructions=started["system_prompt"],
            first_message=started["first_message"],
        )
    )
    score = httpx.post(f"{server}/v1/episodes/{episode}/score").raise_for_status().json()
    return episode, score


def _gateway(texts: list[str], recorder: CallRecorder) -> Any:
    backend = LocalBackend(scripted_model(texts), LocalOptions(tool_format="hermes", kv_cache=False))
    return serve(create_gateway_app(backend, recorder))


@pytest.mark.slow
def test_an_agents_sdk_program_earns_reward_1_through_the_gateway_with_exact_tokens(tmp_path: Path) -> None:
    recorder = CallRecorder()
    with StoppableServer(tmp_path) as server:
        texts = [*reference_texts(server.url, TASK), "###STOP###"]
        with _gateway(list(texts), recorder) as gateway:
            episode, score = _play(server.url, gateway)
            listed = httpx.get(f"{gateway}/episodes/{episode}/calls").json()
    assert score["status"] == "scored" and score["reward"] == 1
    calls = recorder.calls(episode)
    assert [c["index"] for c in listed] == [c.index for c in calls] and len(calls) >= 2
    tokenizer = smollm2_tokenizer()
    for call, text in zip(calls, texts, strict=False):
        assert tokenizer.decode(call.completion_ids) == text + "<|im_end|>"  # exactly what the model produced
        assert len(call.logprobs) == len(call.completion_ids)
    assert calls[0].response["tool_calls"][0]["function"]["name"] == "renew_loan"
    samples = samples_from_calls(calls, float(score["reward"]))
    trained = [t for s in samples for t, m in zip(s.completion_ids, s.mask, strict=True) if m]
    assert trained == [t for c in calls for t in c.completion_ids]  # every sampled id, nothing else, trained


class _StopsTheServer(LocalBackend):
    """The model answers its first call, then the episode's server goes down (mid-episode)."""

    def __init__(self, texts: list[str], server: StoppableServer) -> None:
        super().__init__(scripted_model(texts), LocalOptions(tool_format="hermes", kv_cache=False))
        self.server = server

    async def generate(self, *args: Any, **kwargs: Any) -> Generation:
        generation = await super().generate(*args, **kwargs)
        await asyncio.to_thread(self.server.stop)
        return generation


@pytest.mark.slow
def test_a_server_stopped_mid_episode_leaves_no_reward_to_train_on(tmp_path: Path) -> None:
    recorder = CallRecorder()
    with StoppableServer(tmp_path) as server:
        backend = _StopsTheServer(reference_texts(server.url, TASK), server)
        with serve(create_gateway_app(backend, recorder)) as gateway:
            started = httpx.post(f"{server.url}/v1/episodes", json={"task_id": TASK}).json()
            episode = started["episode_id"]
            with pytest.raises(Exception):  # noqa: B017 - the program's tool call finds the server gone
                asyncio.run(
                    run_agent_program(
                        f"{gateway}/episodes/{episode}/v1",
                        f"{server.url}/v1/episodes/{episode}/mcp",
                        f"{server.url}/v1/episodes/{episode}",
                        started["system_prompt"],
                        started["first_message"],
                    )
                )
        collected = asyncio.run(_collect(server.url, episode, recorder))
    assert collected.status == "backend_error" and collected.reward is None
    assert len(collected.samples) == 1 and collected.samples[0].reward is None  # masked, never a 0


async def _collect(server: str, episode: str, recorder: CallRecorder) -> GatewayEpisode:
    async with AsyncGroundstateClient(server) as client:
        return await collect_episode(client, episode, recorder.calls(episode))


@pytest.mark.slow
def test_a_scored_gateway_episode_collects_its_reward(tmp_path: Path) -> None:
    recorder = CallRecorder()
    with StoppableServer(tmp_path) as server, _gateway(["###STOP###"], recorder) as gateway:
        episode, _ = _play(server.url, gateway)
        collected = asyncio.run(_collect(server.url, episode, recorder))
    assert collected.status == "scored" and collected.reward == 0.0
    assert [s.reward for s in collected.samples] == [0.0]


@pytest.mark.slow
def test_one_grpo_step_trains_on_the_gateways_samples(tmp_path: Path) -> None:
    from trainer.gateway.grpo import grpo_step
    from trainer.policies.local import read_model

    recorder = CallRecorder()
    rows = []
    with StoppableServer(tmp_path) as server:
        gold = [*reference_texts(server.url, TASK), "###STOP###"]
        for texts in (gold, ["###STOP###"]):  # one success, one idle failure: a group GRPO learns from
            with _gateway(list(texts), recorder) as gateway:
                episode, score = _play(server.url, gateway)
            rows.append(episode_row(recorder.calls(episode), float(score["reward"])))
    assert [r.reward for r in rows] == [1.0, 0.0]
    model, tokenizer = read_model("smollm2")
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    logs = grpo_step(model, tokenizer, {TASK: rows}, tmp_path / "trl")
    assert "loss" in logs
    changed = [n for n, p in model.named_parameters() if not bool((p.detach() == before[n]).all())]
    assert changed, "the GRPO step left every weight as it was"
