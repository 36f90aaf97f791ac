"""The verifiers adapter, run by verifiers' own evaluation (`vf-eval`) in its own virtual environment.

verifiers 0.4 pins an older `mcp` and `openai` than ours, so it lives in `.venv-verifiers`
(`make verifiers-env`, `GROUNDSTATE_VERIFIERS_PYTHON`); the player's model is a real OpenAI-compatible
server answering with the task's reference turns (`scripted_openai`), so the reward path is deterministic.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import IN_CI
from tests.live_server import serve
from tests.trainer.adapters.conftest import TASK, StoppableServer
from tests.trainer.adapters.scripted_openai import MODEL, Script, scripted_openai_app
from tests.trainer.scripted_model import reference_texts

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="module")
def verifiers_python() -> str:
    """The interpreter of the virtual environment holding verifiers (`make verifiers-env`)."""
    python = os.environ.get("GROUNDSTATE_VERIFIERS_PYTHON", str(ROOT / ".venv-verifiers" / "bin" / "python"))
    importable = (
        Path(python).exists() and subprocess.run([python, "-c", "import verifiers.v1"]).returncode == 0
    )
    if not importable:
        if IN_CI:
            pytest.fail(f"verifiers is required under CI but {python} cannot import verifiers.v1")
        pytest.skip(f"no verifiers at {python} (make verifiers-env)")
    return python


def _vf_eval(python: str, server: str, model: str, out: Path) -> dict[str, Any]:
    """Run `vf-eval` on the starter task; returns the one episode it wrote."""
    bindir = str(Path(python).parent)
    command = [
        f"{bindir}/vf-eval", "groundstate_verifiers",
        "--env.taskset.server-url", server, "--env.taskset.env", "starter",
        "--select.include.names", TASK, "--num-rollouts", "1",
        "--model", MODEL, "--client.base-url", f"{model}/v1", "--client.api-key-var", "SCRIPTED_API_KEY",
        "--output-dir", str(out), "--no-push",
    ]  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SCRIPTED_API_KEY": "unused",
        "PATH": f"{bindir}:{os.environ['PATH']}",
    }
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    (traces,) = out.glob("*/traces.jsonl")
    (episode,) = [json.loads(line) for line in traces.read_text().splitlines()]
    return dict(episode)


def test_vf_eval_scores_the_reference_turns_at_the_servers_reward(
    verifiers_python: str, tmp_path: Path
) -> None:
    with StoppableServer(tmp_path) as server:
        script = Script([*reference_texts(server.url, TASK), "###STOP###"])
        with serve(scripted_openai_app(script)) as model:
            episode = _vf_eval(verifiers_python, server.url, model, tmp_path / "out")
    assert episode["ok"] and not episode["errors"]
    (trace,) = episode["traces"]
    assert trace["rewards"]["groundstate"]["score"] == 1.0
    assert trace["metrics"]["check:state"] == 1.0
    info = trace["info"]["groundstate"]
    assert info["env_id"].startswith("starter@") and info["task_id"] == TASK
    assert "<tools>" in script.requests[0]["messages"][0]["content"]  # the tools reach the model's prompt


def test_vf_eval_scores_an_idle_agent_zero(verifiers_python: str, tmp_path: Path) -> None:
    with StoppableServer(tmp_path) as server, serve(scripted_openai_app(Script(["###STOP###"]))) as model:
        episode = _vf_eval(verifiers_python, server.url, model, tmp_path / "out")
    assert episode["ok"]
    assert episode["traces"][0]["rewards"]["groundstate"]["score"] == 0.0


def test_a_server_stopped_mid_episode_is_an_errored_episode_not_a_zero(
    verifiers_python: str, tmp_path: Path
) -> None:
    with StoppableServer(tmp_path) as server:
        texts = reference_texts(server.url, TASK)

        class StopsTheServer(Script):
            def next(self, body: dict[str, Any]) -> str:
                server.stop()  # the model answers; then the episode's server is gone
                return super().next(body)

        with serve(scripted_openai_app(StopsTheServer(texts))) as model:
            episode = _vf_eval(verifiers_python, server.url, model, tmp_path / "out")
    assert not episode["ok"]
    assert any(
        "backend_error" in json.dumps(e) or "EpisodeBackendError" in json.dumps(e) for e in episode["errors"]
    )
    assert all("groundstate" not in t["rewards"] for t in episode["traces"])
