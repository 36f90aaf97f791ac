"""The floor of `benchmarks/floor.py` keeps the server's episode routes and answers with their models."""

import json
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from benchmarks.floor import CANNED_ENV, create_floor_app
from env_server.api.episodes import router as episodes_router
from env_server.api.health import router as health_router


@pytest.fixture
def floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    canned = {
        "t1": {
            "started": {
                "task_id": "t1",
                "domain": "hotel",
                "system_prompt": "policy",
                "tools": [],
                "tool_kinds": {},
                "first_message": "hi",
                "user": "scripted",
            },
            "calls": [{"name": "a", "output": 1}, {"name": "b", "error": "no"}],
            "score": {"status": "scored", "reward": 1},
        }
    }
    (tmp_path / "canned.json").write_text(json.dumps(canned))
    monkeypatch.setenv(CANNED_ENV, str(tmp_path / "canned.json"))
    return TestClient(create_floor_app())


def _routes(routes: list) -> set[tuple[str, str, object]]:
    return {(r.path, m, r.response_model) for r in routes if isinstance(r, APIRoute) for m in r.methods}


def test_the_floor_has_the_servers_episode_routes_and_models(floor: TestClient) -> None:
    served = _routes(episodes_router.routes) | _routes(health_router.routes)
    for route in _routes(floor.app.routes):  # type: ignore[attr-defined]
        path, method, _ = route
        if path == "/healthz":
            assert (path, method) in {(p, m) for p, m, _ in served}
        else:
            assert route in served


def test_the_floor_replays_the_recorded_answers_in_order(floor: TestClient) -> None:
    started = floor.post("/v1/episodes", json={"task_id": "t1"})
    assert started.status_code == 201
    eid = started.json()["episode_id"]
    outputs = [floor.post(f"/v1/episodes/{eid}/tool_calls", json={"name": "a"}).json() for _ in range(3)]
    assert [o["name"] for o in outputs] == ["a", "b", "a"]
    assert floor.post(f"/v1/episodes/{eid}/score").json()["reward"] == 1
    assert floor.get("/healthz").json()["status"] == "ok"
