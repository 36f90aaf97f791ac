"""The NeMo Gym resources server, served by NeMo Gym's own app in its own virtual environment.

NeMo Gym 0.7 wants Python 3.13 and pins `mcp<2` and `openai==2.44`, so it lives in `.venv-nemo-gym`
(`make nemo-gym-env`, `GROUNDSTATE_NEMO_GYM_PYTHON`); `examples/nemo_gym_episode.py` plays the agent's part:
seed a session, call the episode's tools, verify.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import IN_CI
from tests.trainer.adapters.conftest import TASK, StoppableServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[3]
RENEW = [{"name": "renew_loan", "arguments": {"loan_id": "L-1500"}}]


@pytest.fixture(scope="module")
def nemo_python() -> str:
    """The interpreter of the virtual environment holding NeMo Gym (`make nemo-gym-env`)."""
    python = os.environ.get("GROUNDSTATE_NEMO_GYM_PYTHON", str(ROOT / ".venv-nemo-gym" / "bin" / "python"))
    importable = Path(python).exists() and subprocess.run([python, "-c", "import nemo_gym"]).returncode == 0
    if not importable:
        if IN_CI:
            pytest.fail(f"NeMo Gym is required under CI but {python} cannot import nemo_gym")
        pytest.skip(f"no NeMo Gym at {python} (make nemo-gym-env)")
    return python


def _command(python: str, server: str, calls: list[dict[str, Any]], final: str, *extra: str) -> list[str]:
    script = str(ROOT / "examples" / "nemo_gym_episode.py")
    return [
        python,
        script,
        "--server",
        server,
        "--task",
        TASK,
        "--calls",
        json.dumps(calls),
        "--final",
        final,
        *extra,
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _episode(python: str, server: str, calls: list[dict[str, Any]], final: str) -> dict[str, Any]:
    run = subprocess.run(
        _command(python, server, calls, final), env=_env(), capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def test_verify_returns_the_servers_reward_and_checks(nemo_python: str, tmp_path: Path) -> None:
    with StoppableServer(tmp_path) as server:
        out = _episode(nemo_python, server.url, RENEW, "Done: your loan L-1500 is renewed.")
    seed, verify = out["seed"], out["verify"]
    assert seed["env_id"].startswith("starter@") and "renew_loan" in json.dumps(seed["tools"])
    assert '"renewals": 1' in out["tool_outputs"][0]
    assert verify["reward"] == 1.0 and verify["reward_components"]["state"] == 1.0
    assert verify["mask_sample"] is False and verify["status"] == "scored"


def test_an_idle_agent_is_a_zero_not_a_masked_sample(nemo_python: str, tmp_path: Path) -> None:
    with StoppableServer(tmp_path) as server:
        verify = _episode(nemo_python, server.url, [], "")["verify"]
    assert (
        verify["reward"] == 0.0
        and verify["mask_sample"] is False
        and verify["reward_components"]["state"] == 0.0
    )


def test_a_server_stopped_mid_episode_is_a_masked_sample(nemo_python: str, tmp_path: Path) -> None:
    hold = tmp_path / "seeded"
    with StoppableServer(tmp_path) as server:
        command = _command(nemo_python, server.url, RENEW, "Done.", "--hold-after-seed", str(hold))
        proc = subprocess.Popen(
            command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 240
        while not hold.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the episode was never seeded"
            time.sleep(0.1)
        server.stop()
        hold.unlink()
        stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    verify = json.loads(stdout.strip().splitlines()[-1])["verify"]
    assert verify["mask_sample"] is True and verify["failure_kind"] == "groundstate:backend_error"
    assert verify["status"] == "backend_error" and verify["reward_components"] == {}
