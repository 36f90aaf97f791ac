"""A write made twice (a resend, an agent repeating itself) is scored, never a 500 from the credit."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.settings import Settings


@pytest.mark.parametrize("task_id", ["travel-add-traveler-001", "insurance-add-driver-001"])
def test_an_episode_with_its_write_made_twice_scores(tmp_path: Path, task_id: str) -> None:
    domain = task_id.split("-", 1)[0]
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", domains=[domain])
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        kinds = client.get(f"/v1/domains/{domain}").json()["tool_kinds"]
        steps = client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]
        eid = client.post("/v1/episodes", json={"task_id": task_id}).json()["episode_id"]
        for step in (s for s in steps if s["role"] == "assistant"):
            if step["tool_call"] is None:
                client.post(f"/v1/episodes/{eid}/messages", json={"content": step["content"]})
                continue
            call = step["tool_call"]
            for _ in range(2 if kinds[call["name"]] == "write" else 1):
                client.post(f"/v1/episodes/{eid}/tool_calls", json=call)
        score = client.post(f"/v1/episodes/{eid}/score")
        assert score.status_code == 200, score.text
        assert score.json()["status"] == "scored"
