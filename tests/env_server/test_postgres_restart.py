"""A PostgreSQL restart mid-episode costs nothing: the server reconnects and the episode goes on.

The test runs its own PostgreSQL instance (initdb into a temporary directory, on a free port), so restarting
it cannot disturb other tests. It needs the PostgreSQL server binaries; without them it is skipped locally
and fails under CI, like every PostgreSQL test.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from tests.conftest import IN_CI
from tests.factories import call, start_episode
from tests.live_server import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


class PrivatePostgres:
    """A throw-away PostgreSQL cluster owned by the `postgres` user (initdb refuses to run as root)."""

    def __init__(self, bindir: Path, data: Path, port: int) -> None:
        self.bindir, self.data, self.port = bindir, data, port
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"

    def run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def pg_ctl(self, action: str) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.data / "server.log")  # the server must not inherit our pipes, or `run` waits for it
        self.run("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-m", "fast", "-w", action)


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        if IN_CI:
            pytest.fail("PostgreSQL server binaries (initdb) are required under CI")
        pytest.skip("no PostgreSQL server binaries")
    data = Path(tempfile.mkdtemp(prefix="gs-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    server = PrivatePostgres(Path(found[-1]).parent, data, free_port())
    server.run("initdb", "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    server.pg_ctl("start")
    try:
        yield server
    finally:
        server.run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(data, ignore_errors=True)


def test_a_postgresql_restart_mid_episode_is_recovered_without_manual_steps(
    private_postgres: PrivatePostgres, toy_registry: DomainRegistry
) -> None:
    url = private_postgres.url
    with TestClient(create_app(Settings(store_url=url, sandbox_url=url), registry=toy_registry)) as client:
        eid = start_episode(client)
        call(client, eid, "transfer", source_id="AC-0001", target_id="AC-0002", amount_cents=5000)
        private_postgres.pg_ctl("restart")  # every pooled connection of the store and the sandboxes dies
        assert client.get("/healthz").status_code == 200
        assert call(client, eid, "get_account", account_id="AC-0001")["output"]["balance_cents"] == 5000
        client.post(f"/v1/episodes/{eid}/messages", json={"content": "transfer complete"})
        score = client.post(f"/v1/episodes/{eid}/score").json()
    assert score["status"] == "scored" and score["reward"] == 1
