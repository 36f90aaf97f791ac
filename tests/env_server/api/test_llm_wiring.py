"""The LLM user and the judge wired into the server, against a real SmolLM2 behind llama.cpp's server."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.factories import call, start_episode
from tests.live_server import serve
from tests.llm_server import EdgeScript, LlamaServer, completion, edge_app


def _settings(tmp_path: Path, server: LlamaServer | None, **extra: object) -> Settings:
    urls = (
        {}
        if server is None
        else {
            "user_base_url": server.base_url,
            "user_model": server.model,
            "judge_base_url": server.base_url,
            "judge_model": server.model,
            "judge_max_retries": 1,
            "user_timeout_s": 60.0,
            "judge_timeout_s": 60.0,
        }
    )
    return Settings(store_url=f"sqlite:///{tmp_path}/s.db", **urls, **extra)  # type: ignore[arg-type]


def test_judge_endpoint_without_a_judge_is_a_clear_503(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    with TestClient(create_app(_settings(tmp_path, None), registry=toy_registry)) as client:
        r = client.post(
            "/v1/judge",
            json={
                "transcript": [{"role": "assistant", "content": "hi"}],
                "questions": ["Was the agent polite?"],
            },
        )
    assert r.status_code == 503 and r.json()["error"]["code"] == "judge-not-configured"


def test_endpoint_without_model_is_refused_at_startup(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="GROUNDSTATE_USER_MODEL"):
        Settings(store_url=f"sqlite:///{tmp_path}/s.db", user_base_url="http://127.0.0.1:1/v1")


@pytest.mark.slow
def test_llm_user_and_judge_through_the_api(
    tmp_path: Path, toy_registry: DomainRegistry, llm_server: LlamaServer
) -> None:
    with TestClient(create_app(_settings(tmp_path, llm_server), registry=toy_registry)) as client:
        started = client.post("/v1/episodes", json={"task_id": "toybank-judge-003", "user": "llm"}).json()
        assert started["user"] == "llm" and started["user_model"] == llm_server.model
        assert started["first_message"].strip()
        eid = started["episode_id"]
        call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
        reply = client.post(
            f"/v1/episodes/{eid}/messages", json={"content": "Done: the balance is now 123.00."}
        )
        assert reply.status_code == 200, reply.text
        score = client.post(f"/v1/episodes/{eid}/score").json()
        assert score["status"] == "scored"
        assert score["reward"] == int(all(c["passed"] for c in score["checks"]))  # 1 iff every check passed
        assert score["user_model"] == llm_server.model and score["user_prompt_version"] == "llm-user-v6"
        assert score["judge_model"] == llm_server.model
        rubric = [c for c in score["checks"] if c["name"].startswith("rubric:")]
        assert len(rubric) == 1
        verdicts = client.post(
            "/v1/judge",
            json={
                "transcript": [
                    {"role": "user", "content": "Cancel it."},
                    {"role": "assistant", "content": "This change needs manager approval; it is on hold."},
                ],
                "questions": ["Did the agent mention manager approval?"],
            },
        ).json()
        assert [v["question"] for v in verdicts["verdicts"]] == ["Did the agent mention manager approval?"]
        assert verdicts["model"] == llm_server.model


@pytest.mark.slow
def test_judge_down_gives_backend_error_and_the_server_keeps_serving(
    tmp_path: Path, toy_registry: DomainRegistry, own_llm_server: LlamaServer
) -> None:
    with TestClient(create_app(_settings(tmp_path, own_llm_server), registry=toy_registry)) as client:
        eid = start_episode(client, "toybank-judge-003")
        call(client, eid, "set_balance", account_id="AC-0005", balance_cents=12300)
        said = client.post(f"/v1/episodes/{eid}/messages", json={"content": "Done: the balance is 123.00."})
        assert said.status_code == 200  # with something said, the rubric needs the judge
        own_llm_server.kill()
        score = client.post(f"/v1/episodes/{eid}/score").json()
        assert score["status"] == "backend_error" and score["reward"] is None and score["error"]
        llm_episode = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001", "user": "llm"})
        assert llm_episode.status_code == 503 and llm_episode.json()["error"]["code"] == "backend-error"
        other = start_episode(client)  # scripted episodes are unaffected
        assert call(client, other, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 10000


def test_episode_seed_reaches_every_llm_user_request(tmp_path: Path, toy_registry: DomainRegistry) -> None:
    """`seed` of `POST /v1/episodes` drives that episode's user sampling; without it the server's seed."""
    script = EdgeScript((200, completion("Move 50.00 from AC-0001 to AC-0002, please.")))
    with serve(edge_app(script)) as url:
        settings = Settings(
            store_url=f"sqlite:///{tmp_path}/s.db", user_base_url=f"{url}/v1", user_model="edge", user_seed=7
        )
        with TestClient(create_app(settings, registry=toy_registry)) as client:
            seeded = start_episode(client, user="llm", seed=1234)
            client.post(f"/v1/episodes/{seeded}/messages", json={"content": "Which amount?"})
            start_episode(client, user="llm")
    assert [r["seed"] for r in script.requests] == [1234, 1234, 7]
