"""Real servers on free loopback ports: uvicorn in a thread, or a `groundstate serve` process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run `app` until the block ends; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=120)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("test server did not start in 30 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serve_process(env: dict[str, str], port: int | None = None) -> Iterator[str]:
    """A real `groundstate serve` process (on `port`, else a free one), `env` added; yields its base URL."""
    port = port or free_port()
    command = [sys.executable, "-m", "groundstate", "serve", "--port", str(port)]
    proc = subprocess.Popen(command, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("groundstate serve did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
