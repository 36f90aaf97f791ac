"""`POST /v1/tasks/mint`: fresh train tasks enter a running server, validated first, served by all workers."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from env_server.domain import ScenarioContext, ScenarioFamily
from env_server.domain.registry import DomainRegistry
from env_server.generation.minting import MINT_FLOOR
from shared.tasks import Task
from tests.factories import make_client, start_episode
from tests.toy_domain import domain as toy_domain
from tests.toy_domain.families import transfer


def _mint(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/tasks/mint", json={"domain": "toybank", **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _play_reference(client: TestClient, task_id: str) -> dict[str, Any]:
    """Play the task's reference conversation as the agent; the score."""
    episode_id = start_episode(client, task_id)
    steps = client.get(f"/v1/tasks/{task_id}/reference").json()["steps"]
    for step in (s for s in steps if s["role"] == "assistant"):
        if step.get("tool_call"):
            call = step["tool_call"]
            client.post(f"/v1/episodes/{episode_id}/tool_calls", json=call).raise_for_status()
        else:
            client.post(f"/v1/episodes/{episode_id}/messages", json={"content": step["content"]})
    return dict(client.post(f"/v1/episodes/{episode_id}/score").json())


def test_minted_tasks_are_train_tasks_the_server_serves_and_a_good_agent_passes(client: TestClient) -> None:
    minted = _mint(client, families=["transfer"], n=3, seed=5)
    tasks = minted["tasks"]
    assert len(tasks) == 3 and {t["split"] for t in tasks} == {"train"}
    for task in tasks:
        family, _, index = task["id"].removeprefix("toybank-gen-").rpartition("-")
        assert family == "transfer" and int(index) >= MINT_FLOOR
    listed = {t["id"] for t in client.get("/v1/tasks", params={"split": "train"}).json()}
    assert {t["id"] for t in tasks} <= listed
    assert not {t["id"] for t in tasks} & {t["id"] for t in client.get("/v1/tasks?split=test").json()}
    gold = client.get(f"/v1/tasks/{tasks[0]['id']}", params={"include_gold": True}).json()
    assert gold["gold_actions"]  # the server keeps the whole task
    score = _play_reference(client, tasks[0]["id"])
    assert score["reward"] == 1, score
    nothing = client.post(f"/v1/episodes/{start_episode(client, tasks[0]['id'])}/score").json()
    assert nothing["reward"] == 0


def test_each_mint_draws_at_fresh_indices_and_families_take_turns(client: TestClient) -> None:
    first = [t["id"] for t in _mint(client, n=2, seed=1)["tasks"]]
    second = [t["id"] for t in _mint(client, n=2, seed=1)["tasks"]]
    assert not set(first) & set(second)  # the same request again mints new tasks, never a served id
    families = {i.removeprefix("toybank-gen-").rpartition("-")[0] for i in first + second}
    assert families == {"transfer", "count-rich"}


def test_another_worker_serves_a_minted_task_without_a_restart(tmp_path: Path, sandbox_url: str) -> None:
    registry = DomainRegistry([toy_domain])
    one, two = (make_client(tmp_path, sandbox_url, registry) for _ in range(2))
    with one, two:
        task_id = _mint(one, families=["transfer"], n=1)["tasks"][0]["id"]
        assert two.get(f"/v1/tasks/{task_id}").status_code == 200
        assert _play_reference(two, task_id)["reward"] == 1
    with make_client(tmp_path, sandbox_url, registry) as restarted:  # kept across a restart
        assert restarted.get(f"/v1/tasks/{task_id}").json()["split"] == "train"


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"domain": "toybank", "families": ["nope"], "n": 1}, 422, "families"),
        ({"domain": "nowhere", "n": 1}, 404, "domain"),
        ({"domain": "toybank", "n": 0}, 422, "n"),
        ({"domain": "toybank", "n": 33}, 422, "n"),
        ({"domain": "toybank", "n": 1, "families": []}, 422, "families"),
        ({"domain": "toybank", "n": 1, "task": {"id": "x"}}, 422, "task"),  # a caller can never send a task
    ],
)
def test_bad_mint_requests_are_refused_naming_the_field(
    client: TestClient, body: dict[str, Any], status: int, field: str
) -> None:
    response = client.post("/v1/tasks/mint", json=body)
    assert response.status_code == status, response.text
    assert field in (response.json()["error"]["field"] or "")


def _server_with_families(tmp_path: Path, *families: ScenarioFamily) -> TestClient:
    domain = dataclasses.replace(toy_domain, families=list(families))
    return make_client(tmp_path, "sqlite://", DomainRegistry([domain]))


def _gold_does_nothing(ctx: ScenarioContext) -> Task:
    """A family with a bug: its gold changes nothing, so doing nothing would earn the reward."""
    task = transfer(ctx)
    return task.model_copy(update={"gold_actions": [], "communicate": []})


def _test_split(ctx: ScenarioContext) -> Task:
    """A family with a worse bug: it builds a test task."""
    return transfer(ctx).model_copy(update={"split": "test"})


def test_a_draw_that_fails_validation_or_is_a_test_task_is_never_served(tmp_path: Path) -> None:
    families = (
        ScenarioFamily(name="hollow", covers=("1",), build=_gold_does_nothing),
        ScenarioFamily(name="leaky", covers=("1",), build=_test_split),
    )
    with _server_with_families(tmp_path, *families) as client:
        minted = _mint(client, n=2)
        assert minted["tasks"] == []
        reasons = {d["family"]: d["reason"] for d in minted["discarded"]}
        assert reasons["hollow"].startswith("validation")
        assert "test task" in reasons["leaky"]
        assert len(minted["discarded"]) == 6  # three draws per task asked for, then the request gives up
        served = {t["id"] for t in client.get("/v1/tasks").json()}
        assert not any("-gen-" in t for t in served)


def test_a_domain_without_families_cannot_mint(tmp_path: Path) -> None:
    with _server_with_families(tmp_path) as client:
        response = client.post("/v1/tasks/mint", json={"domain": "toybank", "n": 1})
        assert response.status_code == 422 and response.json()["error"]["field"] == "domain"


def test_minting_needs_the_api_key(tmp_path: Path) -> None:
    with make_client(tmp_path, "sqlite://", DomainRegistry([toy_domain]), api_key="s3cret") as client:
        assert client.post("/v1/tasks/mint", json={"domain": "toybank", "n": 1}).status_code == 401
        authorised = client.post(
            "/v1/tasks/mint", json={"domain": "toybank", "n": 1}, headers={"Authorization": "Bearer s3cret"}
        )
        assert authorised.status_code == 200 and len(authorised.json()["tasks"]) == 1
