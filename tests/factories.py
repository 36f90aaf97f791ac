"""Builders shared by tests: start episodes, run tool calls, register plug-in domains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings


def start_episode(client: TestClient, task_id: str = "toybank-transfer-001", **extra: Any) -> str:
    """Start an episode and return its id (asserting the start succeeded)."""
    response = client.post("/v1/episodes", json={"task_id": task_id, **extra})
    assert response.status_code == 201, response.text
    return str(response.json()["episode_id"])


def call(client: TestClient, episode_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool and return the JSON body (asserting HTTP 200)."""
    response = client.post(
        f"/v1/episodes/{episode_id}/tool_calls", json={"name": name, "arguments": arguments}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def make_client(tmp_path: Path, sandbox_url: str, registry: DomainRegistry, **settings: Any) -> TestClient:
    """A client of an app on the store in `tmp_path`: two such clients act as two workers of one service."""
    config = Settings(store_url=f"sqlite:///{tmp_path}/s.db", sandbox_url=sandbox_url, **settings)
    return TestClient(create_app(config, registry=registry))


def gold_transfer(client: TestClient, episode_id: str) -> None:
    """The toy transfer task's gold write."""
    call(client, episode_id, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)


def finish(client: TestClient, episode_id: str) -> dict[str, Any]:
    """Report to the toy user and score; the score's JSON."""
    client.post(f"/v1/episodes/{episode_id}/messages", json={"content": "The transfer complete."})
    return dict(client.post(f"/v1/episodes/{episode_id}/score").json())


def register_entry_point(site: Path, name: str, target: str) -> None:
    """Write a minimal installed-distribution record so `importlib.metadata` finds a domain entry point.

    This is exactly what `pip install acme-domain` leaves behind; `site` must be on `sys.path`.
    """
    dist = site / f"{name}_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[groundstate.domains]\n{name} = {target}\n")


def play_reference(client: TestClient, task_id: str) -> str:
    """Play a task's reference conversation (gold calls, the user's yes, the reply); the episode's id."""
    steps = client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]
    episode_id = start_episode(client, task_id)
    for step in steps[1:]:
        if step["role"] == "assistant" and step["tool_call"]:
            call(client, episode_id, step["tool_call"]["name"], **step["tool_call"]["arguments"])
        elif step["role"] == "assistant":
            response = client.post(f"/v1/episodes/{episode_id}/messages", json={"content": step["content"]})
            assert response.status_code == 200, response.text
    return episode_id
