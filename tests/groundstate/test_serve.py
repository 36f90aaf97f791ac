"""`groundstate serve` and `make run`: the port and host a newcomer asks for, and a clear word if taken.

Through the real entry point (`python -m groundstate`), in a fresh process each.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live_server import free_port

ROOT = Path(__file__).parents[2]


def _env(tmp_path: Path, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GROUNDSTATE_PORT", "GROUNDSTATE_HOST")}
    # the process runs in `tmp_path` (its store, nothing left behind) on this checkout's code
    store = f"sqlite:///{tmp_path}/store.db"
    return {**env, "PYTHONPATH": str(ROOT), "GROUNDSTATE_STORE_URL": store, "COLUMNS": "80", **variables}


def _serve(tmp_path: Path, *options: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groundstate", "serve", *options],
        env=_env(tmp_path, **variables),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def test_serve_listens_on_groundstate_port_and_says_where(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "groundstate", "serve"],
        env=_env(tmp_path, GROUNDSTATE_PORT=str(port), GROUNDSTATE_HOST="127.0.0.1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "groundstate serve did not start"
                time.sleep(0.2)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    said = " ".join(out.split())
    assert f"groundstate on http://127.0.0.1:{port} " in said and f"http://127.0.0.1:{port}/ui" in said


def test_a_taken_port_is_refused_before_any_url_is_announced(tmp_path: Path, taken_port: int) -> None:
    out = _serve(tmp_path, "--port", str(taken_port))
    said = " ".join(out.stdout.split())
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"cannot listen on 127.0.0.1:{taken_port}: the port is taken by another program" in said
    assert f"make run PORT={taken_port + 10}" in said and "GROUNDSTATE_PORT=" in said
    assert "groundstate on" not in said and "Traceback" not in out.stderr


def test_groundstate_port_is_honoured_and_the_option_wins_over_it(tmp_path: Path, taken_port: int) -> None:
    from_variable = _serve(tmp_path, GROUNDSTATE_PORT=str(taken_port))
    assert from_variable.returncode == 1 and f"127.0.0.1:{taken_port}" in from_variable.stdout
    from_option = _serve(tmp_path, "--port", str(taken_port), GROUNDSTATE_PORT="1")
    assert from_option.returncode == 1 and f"127.0.0.1:{taken_port}" in from_option.stdout


def test_a_bad_groundstate_port_is_refused_by_name(tmp_path: Path) -> None:
    out = _serve(tmp_path, GROUNDSTATE_PORT="eighty")
    assert out.returncode == 2 and "invalid settings" in out.stdout and "Traceback" not in out.stderr


def test_make_run_hands_port_and_host_to_serve() -> None:
    # under `make test` this runs in a sub-make: MAKEFLAGS and MAKELEVEL would make it print directories
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}

    def recipe(*variables: str) -> str:
        command = ["make", "--no-print-directory", "-n", "run", *variables]
        out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True, env=env)
        return out.stdout.strip().splitlines()[-1]

    assert recipe("PORT=8010", "HOST=0.0.0.0").endswith("groundstate serve --port 8010 --host 0.0.0.0")
    assert recipe().endswith("groundstate serve")  # GROUNDSTATE_PORT / GROUNDSTATE_HOST, else the defaults
