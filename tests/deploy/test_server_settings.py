"""What a replica behind a load balancer needs from the server: it names itself in every response, it can be
told not to migrate (and then refuses a store that is not at the code's revision)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine
from typer.testing import CliRunner

from env_server.api import health
from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from env_server.store.migrate import head, upgrade
from groundstate.cli import app
from tests.live_server import free_port


def test_every_response_names_the_replica_even_a_refusal(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", api_key="k", replica_id="gs7")
    with TestClient(create_app(settings, registry=toy_registry)) as client:
        assert client.get("/healthz").headers["x-groundstate-replica"] == "gs7"
        refused = client.get("/v1/domains")
        assert refused.status_code == 401 and refused.headers["x-groundstate-replica"] == "gs7"
        ok = client.get("/v1/domains", headers={"Authorization": "Bearer k"})
        assert ok.status_code == 200 and ok.headers["x-groundstate-replica"] == "gs7"


def test_the_replica_defaults_to_host_and_port() -> None:
    assert Settings(port=8123).replica_id == f"{socket.gethostname()}:8123"


def test_serve_without_migrating_refuses_a_store_behind_the_code(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/empty.db"
    result = CliRunner().invoke(app, ["serve", "--no-migrate"], env={"GROUNDSTATE_STORE_URL": store})
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "is at revision none (empty)" in said and f"needs {head()}" in said
    assert "groundstate db upgrade" in said


def test_a_migrated_store_is_at_head(tmp_path: Path) -> None:
    from env_server.store.migrate import require_head

    store = f"sqlite:///{tmp_path}/s.db"
    upgrade(store)
    require_head(store)  # raises if not


@pytest.mark.slow
def test_metrics_of_a_multi_worker_server_count_every_worker(tmp_path: Path) -> None:
    """A scrape reaches one worker at random; what it reports must be the server's, not that worker's."""
    port = free_port()
    env = {
        **os.environ,
        "GROUNDSTATE_STORE_URL": f"sqlite:///{tmp_path}/s.db",
        "GROUNDSTATE_DOMAINS": '["hotel"]',
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "groundstate", "serve", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        with httpx.Client(base_url=url) as client:  # new connections spread over both workers
            for _ in range(8):
                started = client.post(
                    "/v1/episodes",
                    json={"task_id": "hotel-corp-modify-approval-001"},
                    headers={"Connection": "close"},
                )
                assert started.status_code == 201, started.status_code
            for _ in range(6):
                scraped = client.get("/metrics", headers={"Connection": "close"}).text
                assert re.search(r"^groundstate_live_sandboxes 8\.0$", scraped, re.M), scraped[-2000:]
                created = re.search(
                    r'^groundstate_requests_total\{route="/v1/episodes",status="201"\} (\S+)$', scraped, re.M
                )
                assert created is not None and float(created.group(1)) == 8.0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def wait_healthy(url: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} did not become healthy")


def test_a_rotated_out_key_is_accepted_until_it_is_dropped(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    def status(settings: Settings, key: str) -> int:
        with TestClient(create_app(settings, registry=toy_registry)) as client:
            return client.get("/v1/domains", headers={"Authorization": f"Bearer {key}"}).status_code

    store = f"sqlite:///{tmp_path}/s.db"
    rotating = Settings(store_url=store, api_key="new", previous_api_keys=["old"])
    assert (status(rotating, "new"), status(rotating, "old"), status(rotating, "other")) == (200, 200, 401)
    rotated = Settings(store_url=store, api_key="new")
    assert (status(rotated, "new"), status(rotated, "old")) == (200, 401)


def test_previous_keys_without_a_key_do_not_start() -> None:
    with pytest.raises(
        ValueError, match="GROUNDSTATE_PREVIOUS_API_KEYS is set but GROUNDSTATE_API_KEY is not"
    ):
        Settings(previous_api_keys=["old"])


@pytest.mark.postgres
def test_the_database_pools_are_sized_by_the_setting(
    tmp_path: Path, pg_url: str, toy_registry: DomainRegistry
) -> None:
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db", sandbox_url=pg_url, db_pool_size=3)
    service = create_app(settings, registry=toy_registry).state.episodes
    try:
        assert service.sandboxes.engine.pool.size() == 3
        assert service.sandboxes.engine.pool._max_overflow == 6
    finally:
        service.sandboxes.close()


def test_a_database_that_refuses_connections_is_a_503_backend_error(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    """As under load when PostgreSQL says `too many clients`: retriable, never a 500."""
    closed = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/none"
    settings = Settings(store_url=closed, auto_migrate=False)
    with TestClient(create_app(settings, registry=toy_registry), raise_server_exceptions=False) as client:
        for response in (
            client.get("/healthz"),
            client.post("/v1/episodes", json={"task_id": "toybank-judge-003"}),
        ):
            assert response.status_code == 503, response.text
            error = response.json()["error"]
            assert error["code"] == "backend-error" and "the database is unavailable" in error["message"]


def test_healthz_reports_a_store_that_stops_answering(
    tmp_path: Path, toy_registry: DomainRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe trusts a successful store check for a moment only; a failed request ends that moment."""
    monkeypatch.setattr(health, "STORE_CHECK_VALID_S", 0.2)
    closed_postgres = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/none"
    settings = Settings(store_url=f"sqlite:///{tmp_path}/s.db")
    with TestClient(create_app(settings, registry=toy_registry), raise_server_exceptions=False) as client:
        store = client.app.state.episodes.store  # type: ignore[attr-defined]
        working, down_engine = store.engine, create_engine(closed_postgres)

        def store_on(engine: Engine) -> None:  # the store's engine and the sessions it makes
            store.engine = engine
            store._sessions.configure(bind=engine)

        assert client.get("/healthz").status_code == 200
        store_on(down_engine)
        time.sleep(0.3)  # past the last success's window: the probe asks the store, which is down
        down = client.get("/healthz")
        assert down.status_code == 503 and down.json()["error"]["code"] == "backend-error"
        store_on(working)
        assert client.get("/healthz").status_code == 200
        store_on(down_engine)
        refused = client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"})
        assert refused.status_code == 503  # a request met the outage: the next probe asks at once
        assert client.get("/healthz").status_code == 503
        store_on(working)


def test_the_worker_thread_pool_is_sized_by_the_settings(
    tmp_path: Path, toy_registry: DomainRegistry
) -> None:
    import anyio.to_thread

    def pool_size() -> int:
        return int(anyio.to_thread.current_default_thread_limiter().total_tokens)

    for threads in (3, 40):
        settings = Settings(store_url=f"sqlite:///{tmp_path}/s{threads}.db", worker_threads=threads)
        with TestClient(create_app(settings, registry=toy_registry)) as client:
            assert client.portal is not None
            assert client.portal.call(pool_size) == threads
            assert client.post("/v1/episodes", json={"task_id": "toybank-transfer-001"}).status_code == 201
