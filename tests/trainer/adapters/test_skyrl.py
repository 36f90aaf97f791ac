"""The SkyRL-Gym adapter, run through SkyRL-Gym's own registry and `init`/`step` API against a live server."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import skyrl_gym

from tests.trainer.adapters.conftest import TASK, starter_server
from tests.trainer.scripted_model import reference_texts
from trainer.adapters import VersionMismatchError
from trainer.adapters.skyrl import ENV_ID, EpisodeBackendError, register_skyrl_env


def _make(server: str, env: str = "starter", task_id: str = TASK) -> skyrl_gym.Env:
    register_skyrl_env()
    return skyrl_gym.make(ENV_ID, env_config={"server_url": server, "env": env}, extras={"task_id": task_id})


def test_reference_turns_earn_the_servers_reward(server: str) -> None:
    env = _make(server)
    conversation, meta = env.init([])
    assert conversation[0]["role"] == "system" and "<tools>" in conversation[0]["content"]
    assert conversation[1]["role"] == "user"
    assert meta["env_id"].startswith("starter@")
    outputs = []
    for text in [*reference_texts(server, TASK), "###STOP###"]:  # the model ends once the user is served
        out = env.step(text)
        outputs.append(out)
        if out["done"]:
            break
    assert all(o["reward"] == 0.0 and not o["done"] for o in outputs[:-1])
    assert outputs[-1]["done"] and outputs[-1]["reward"] == 1.0
    assert any("<tool_response>" in m["content"] for o in outputs for m in o["observations"])
    meta = outputs[-1]["metadata"]
    assert meta["status"] == "scored" and meta["checks"]
    assert httpx.get(f"{server}/v1/episodes/{meta['episode_id']}").status_code == 200


def test_a_silent_agent_scores_zero_not_an_error(server: str) -> None:
    env = _make(server)
    env.init([])
    out = env.step("###STOP###")
    assert out["done"] and out["reward"] == 0.0
    assert out["metadata"]["status"] == "scored"


def test_a_stopped_server_is_a_backend_error_never_a_zero(tmp_path: Path) -> None:
    with starter_server(tmp_path) as url:
        env = _make(url)
        env.init([])
        first = reference_texts(url, TASK)[0]
    with pytest.raises(EpisodeBackendError) as caught:
        env.step(first)
    assert caught.value.result.status == "backend_error" and caught.value.result.reward is None


def test_a_pinned_version_the_server_does_not_grade_is_refused(server: str) -> None:
    env = _make(server, env="starter@0000dead")
    with pytest.raises(VersionMismatchError, match="starter@0000dead"):
        env.init([])


def test_a_task_of_another_domain_is_refused(server: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        _make(server, task_id="hotel-corp-modify-approval-007")
