"""A domain defined outside env_server/domains/ is found through its entry point and served unchanged."""

from pathlib import Path

from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings


def test_entry_point_domain_is_discovered(toy_site: Path) -> None:
    registry = DomainRegistry.discover(only=["toybank"])
    assert [d.name for d in registry.domains] == ["toybank"]
    assert registry.task("toybank-transfer-001").domain == "toybank"


def test_entry_point_domain_is_served_without_server_changes(toy_site: Path, tmp_path: Path) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", domains=["toybank"])
    with TestClient(create_app(settings)) as client:
        assert [d["name"] for d in client.get("/v1/domains").json()] == ["toybank"]
        eid = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).json()["episode_id"]
        r = client.post(
            f"/v1/episodes/{eid}/tool_calls",
            json={"name": "get_account", "arguments": {"account_id": "AC-0002"}},
        )
        assert r.json()["output"]["owner"] == "Ben"


def test_extra_tasks_dir_is_served_next_to_builtin_tasks(tmp_path: Path) -> None:
    from tests.toy_domain import domain

    extra = tmp_path / "generated"
    extra.mkdir()
    text = (Path(__file__).parents[2] / "toy_domain/tasks/toybank-transfer-001.yaml").read_text()
    (extra / "toybank-gen-001.yaml").write_text(
        text.replace("toybank-transfer-001", "toybank-gen-001").replace("split: test", "split: train")
    )
    registry = DomainRegistry(
        [domain], extra_tasks=__import__("env_server.domain.registry", fromlist=["x"]).load_tasks_dir(extra)
    )
    assert registry.task("toybank-gen-001").split == "train"
    served = {t.id for t in registry.tasks(domain="toybank")}
    assert served == {t.id for t in domain.tasks} | {"toybank-gen-001"}
