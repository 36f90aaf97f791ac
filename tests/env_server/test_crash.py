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
from shared.models import ReferenceStep, ToolCallResult
from shared.tasks import Task
from tests.live_server import free_port

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
        steps = [s for s in client.reference(TASK).steps if s.role == "assistant"]
        eid = client.start_episode(TASK).episode_id
        half = len(steps) // 2
        done = [_play(client, eid, step) for step in steps[:half]]
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    with server(store, port), GroundstateClient(url) as client:
        rest = [_play(client, eid, step) for step in steps[half:]]
        score = client.score(eid)
        events = client.episode(eid).events
    assert all(r is None or r.error is None for r in done + rest)
    assert score.status == "scored" and score.reward == 1, score.checks
    assert [e.kind for e in events].count("tool_call") == len(task.gold_actions)


def _play(client: GroundstateClient, episode_id: str, step: ReferenceStep) -> ToolCallResult | None:
    """One agent step of a reference conversation: its call's result, or None for a message."""
    if step.tool_call is not None:
        return client.call_tool(episode_id, step.tool_call.name, step.tool_call.arguments)
    client.send_message(episode_id, step.content or "")
    return None
