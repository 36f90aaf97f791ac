"""Builders shared by tests: start episodes, run tool calls, register plug-in domains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient


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


def register_entry_point(site: Path, name: str, target: str) -> None:
    """Write a minimal installed-distribution record so `importlib.metadata` finds a domain entry point.

    This is exactly what `pip install acme-domain` leaves behind; `site` must be on `sys.path`.
    """
    dist = site / f"{name}_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[groundstate.domains]\n{name} = {target}\n")
