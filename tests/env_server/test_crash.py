"""`kill -9` of the server mid-episode loses nothing: a new server process finishes the episode.

Real `groundstate serve` processes on a real port, SQLite sandboxes (process memory: gone with the process)
and the default SQLite store file, driven through the shared HTTP client as a trainer would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from shared.client import GroundstateClient
from shared.tasks import Task
from tests.live_server import free_port
from tests.reference_play import agent_steps, play_step

pytestmark = pytest.mark.slow

TASK = "hotel-corp-modify-approval-001"


@contextmanager
def server(store: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "GROUNDSTATE_STORE_URL": f"sqlite:///{store}", "GROUNDSTATE_DOMAINS": '["hotel"]'}
    command = [sys.executable, "-m", "groundstate", "serve", "--port", str(port)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("groundstate serve did not start") from None
                time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def test_kill_9_mid_episode_loses_nothing(tmp_path: Path) -> None:
    store, port = tmp_path / "store.db", free_port()
    url = f"http://127.0.0.1:{port}"
    with server(store, port) as first, GroundstateClient(url) as client:
        task = client.task(TASK, include_gold=True)
        assert isinstance(task, Task)
        # the agent's side of the task's reference conversation: asks, calls, the proposal, the report
        steps = agent_steps(client, TASK)
        eid = client.start_episode(TASK).episode_id
        half = len(steps) // 2
        done = [play_step(client, eid, step) for step in steps[:half]]
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    with server(store, port), GroundstateClient(url) as client:
        rest = [play_step(client, eid, step) for step in steps[half:]]
        score = client.score(eid)
        events = client.episode(eid).events
    assert all(r is None or r.error is None for r in done + rest)
    assert score.status == "scored" and score.reward == 1, score.checks
    assert [e.kind for e in events].count("tool_call") == len(task.gold_actions)

