"""Blame on a real campaign: the reference agent against the real SmolLM2 user (llama.cpp).

The agent plays each task's reference conversation word for word, the conversation that scores 1 with the
scripted user; so every failure here is the simulated user's doing (SmolLM2-135M makes plenty of mistakes)
and must never be blamed on the agent.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.episodes.blame import blame_episode
from env_server.settings import Settings
from env_server.users.llm import LLMUser
from tests.factories import call, start_episode
from tests.llm_server import LlamaServer
from tests.toy_domain import domain as toy_domain

pytestmark = pytest.mark.slow

TASKS = ["toybank-transfer-001", "toybank-ticket-006", "hotel-change-dates-001", "hotel-extras-refusal-001"]


def play_against(client: TestClient, task_id: str) -> str:
    """The reference agent's steps with the LLM user answering; messages stop once the user ended."""
    steps: list[dict[str, Any]] = client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]
    episode = start_episode(client, task_id, user="llm", seed=0)
    done = False
    for step in steps[1:]:
        if step["role"] == "assistant" and step["tool_call"]:
            call(client, episode, step["tool_call"]["name"], **step["tool_call"]["arguments"])
        elif step["role"] == "assistant" and not done:
            reply = client.post(f"/v1/episodes/{episode}/messages", json={"content": step["content"]})
            assert reply.status_code == 200, reply.text
            done = bool(reply.json()["done"])
    return episode


def test_failures_of_the_reference_agent_with_a_real_llm_user_are_never_the_agents(
    settings: Settings, llm_server: LlamaServer
) -> None:
    registry = DomainRegistry([toy_domain, *DomainRegistry.discover([], only=["hotel"]).domains])
    with TestClient(create_app(settings, registry=registry)) as client:
        service = client.app.state.episodes  # type: ignore[attr-defined]
        service.users["llm"] = LLMUser(llm_server.endpoint())
        verdicts = {}
        for task_id in TASKS:
            episode = play_against(client, task_id)
            reward = client.post(f"/v1/episodes/{episode}/score").json()["reward"]
            blame = blame_episode(service, episode)
            verdicts[task_id] = (reward, blame.verdict, blame.reason)
            if reward == 1:
                assert blame.verdict == "not-blamed", blame
            else:
                assert blame.verdict in ("user", "undecided"), blame
                assert blame.user_evidence or blame.scripted_reward == 1, blame
    # at temperature 0 SmolLM2 never says yes to the hotel's proposal: at least that failure is blamed
    assert verdicts["hotel-change-dates-001"][:2] == (0, "user"), verdicts
