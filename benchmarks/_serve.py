"""A real `groundstate serve` in a subprocess, for the benchmarks (one server per benchmark run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.live_server import free_port


def start_server(
    store_dir: Path,
    domains: list[str] | None = None,
    *,
    sandbox_url: str = "sqlite://",
    store_name: str = "store.db",
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server (all domains, or only `domains`), wait for `/healthz`; return the process and URL."""
    store_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "GROUNDSTATE_SANDBOX_URL": sandbox_url,
        "GROUNDSTATE_STORE_URL": f"sqlite:///{store_dir}/{store_name}",
    }
    if domains is not None:
        env["GROUNDSTATE_DOMAINS"] = json.dumps(domains)
    log = (store_dir / "server.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "groundstate", "serve", "--port", str(port)], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        try:
            if httpx.get(url + "/healthz").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start in 120 s")
