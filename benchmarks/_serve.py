"""Real servers in subprocesses for the benchmarks: `groundstate serve`, or any command serving HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from env_server.settings import DEFAULT_PG_URL
from tests.live_server import free_port


def start_server(
    store_dir: Path,
    domains: list[str] | None = None,
    *,
    sandbox_url: str = "sqlite://",
    store_name: str = "store.db",
    store_url: str | None = None,
    workers: int = 1,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server (all domains, or only `domains`), wait for `/healthz`; return the process and URL.

    The store is the SQLite file `store_dir/store_name` unless `store_url` names another; `env` adds
    settings (`GROUNDSTATE_*`).
    """
    store_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GROUNDSTATE_SANDBOX_URL": sandbox_url,
        "GROUNDSTATE_STORE_URL": store_url or f"sqlite:///{store_dir}/{store_name}",
        **(env or {}),
    }
    if domains is not None:
        env["GROUNDSTATE_DOMAINS"] = json.dumps(domains)
    command = [sys.executable, "-m", "groundstate", "serve", "--workers", str(workers)]
    return start_process(command, env, store_dir / "server.log")


@contextmanager
def serving(work_dir: Path, backend: str, workers: int = 1) -> Iterator[str]:
    """`groundstate serve` with `workers` workers, its sandboxes and store on `backend`; yields its URL.

    See `serving_process`.
    """
    with serving_process(work_dir, backend, workers) as served:
        yield served.url


@dataclass(frozen=True)
class Served:
    """A running server: its URL, its process, and the URLs of its PostgreSQL databases (none on SQLite)."""

    url: str
    proc: subprocess.Popen[bytes]
    databases: list[str]


@contextmanager
def serving_process(
    work_dir: Path, backend: str, workers: int = 1, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """`groundstate serve` with `workers` workers on `backend`; yields it with its process and databases.

    SQLite: in-memory sandboxes and a new store file in `work_dir`. PostgreSQL (`GROUNDSTATE_TEST_PG_URL`):
    sandboxes and store in two new databases, dropped afterwards, with pools sized so that four workers
    stay within a stock `max_connections` of 100. `env` adds settings (`GROUNDSTATE_*`).
    """
    with contextlib.ExitStack() as stack:
        if backend == "postgresql":
            pg_url = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
            store_url, sandbox_url = stack.enter_context(private_databases(pg_url, "gs_bench", 2))
            settings = {"GROUNDSTATE_DB_POOL_SIZE": "3"}
        elif backend == "sqlite":
            store_url, sandbox_url, settings = (
                f"sqlite:///{work_dir}/store-{uuid.uuid4().hex[:6]}.db",
                "sqlite://",
                {},
            )
        else:
            raise ValueError(f"unknown backend {backend!r} (sqlite or postgresql)")
        proc, url = start_server(
            work_dir,
            store_url=store_url,
            sandbox_url=sandbox_url,
            workers=workers,
            env={**settings, **(env or {})},
        )
        stack.callback(stop, proc)
        yield Served(url, proc, [store_url, sandbox_url] if backend == "postgresql" else [])


@contextmanager
def private_databases(pg_url: str, prefix: str, count: int) -> Iterator[list[str]]:
    """`count` new, empty databases on the PostgreSQL server of `pg_url` (loopback only), dropped after."""
    if "127.0.0.1" not in pg_url and "localhost" not in pg_url:
        raise ValueError(f"{pg_url}: benchmarks use a PostgreSQL server on loopback only")
    tag = uuid.uuid4().hex[:8]
    names = [f"{prefix}_{n}_{tag}" for n in range(count)]
    base = pg_url.rsplit("/", 1)[0]
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f"CREATE DATABASE {name}"))
        yield [f"{base}/{name}" for name in names]
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def start_process(
    command: list[str], env: dict[str, str], log_path: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """Run `command --port P` (P a free port), wait until `/healthz` answers; return the process and URL."""
    port = free_port()
    log = log_path.open("ab")
    proc = subprocess.Popen([*command, "--port", str(port)], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            if httpx.get(url + "/healthz").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{' '.join(command)} did not start in 120 s (log: {log_path})")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a server started here and wait for it."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
