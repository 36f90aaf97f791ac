"""The production topology on this machine: `deploy/run-local.sh` (migrate, three replicas, HAProxy) as a
context manager, for the soak benchmark and the topology test. Loopback only; stops everything it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LOCAL = ROOT / "deploy" / "run-local.sh"
REPLICAS = 3


@dataclass(frozen=True)
class Topology:
    """Where the running topology answers, and the process that supervises it."""

    lb_url: str
    replica_urls: list[str]
    stats_url: str
    pid: int
    run_dir: Path


def free_ports(count: int) -> int:
    """The first of `count` consecutive loopback ports nobody listens on right now."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = int(probe.getsockname()[1])
        if first + count > 65535:
            continue
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {count} consecutive free loopback ports")


def _logs(run_dir: Path) -> str:
    return "\n".join(f"== {p.name}\n{p.read_text()[-3000:]}" for p in sorted(run_dir.glob("*.log")))


@contextmanager
def local_topology(
    store_url: str,
    sandbox_url: str,
    run_dir: Path,
    workers: int = 1,
    env: dict[str, str] | None = None,
    start_timeout_s: float = 600.0,
) -> Iterator[Topology]:
    """Run `deploy/run-local.sh` until the block ends; yields the load balancer's and the replicas' URLs."""
    first = free_ports(REPLICAS + 2)  # the replicas, then the load balancer and HAProxy's stats
    lb_port, stats_port = first + REPLICAS, first + REPLICAS + 1
    groundstate = Path(sys.executable).parent / "groundstate"
    script_env = {
        **os.environ,
        **(env or {}),
        "GS_STORE_URL": store_url,
        "GS_SANDBOX_URL": sandbox_url,
        "GS_FIRST_PORT": str(first),
        "GS_LB_PORT": str(lb_port),
        "GS_STATS_PORT": str(stats_port),
        "GS_WORKERS": str(workers),
        "GS_RUN_DIR": str(run_dir),
        "GROUNDSTATE": str(groundstate) if groundstate.exists() else "groundstate",
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    out = (run_dir / "run-local.out").open("w")
    proc = subprocess.Popen(
        ["bash", str(RUN_LOCAL)], env=script_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + start_timeout_s
        while "groundstate ready" not in (run_dir / "run-local.out").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                said = (run_dir / "run-local.out").read_text()
                raise RuntimeError(f"deploy/run-local.sh did not come up:\n{said}\n{_logs(run_dir)}")
            time.sleep(0.5)
        yield Topology(
            lb_url=f"http://127.0.0.1:{lb_port}",
            replica_urls=[f"http://127.0.0.1:{first + i}" for i in range(REPLICAS)],
            stats_url=f"http://127.0.0.1:{stats_port}",
            pid=proc.pid,
            run_dir=run_dir,
        )
    finally:
        proc.send_signal(signal.SIGTERM)  # the script stops its replicas and HAProxy
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.close()
