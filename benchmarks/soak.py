"""Soak test of the production topology on this machine: `deploy/run-local.sh` (store migrated once, three
replicas on PostgreSQL sandboxes, HAProxy round-robin in front) under 144 concurrent episodes for a while.

Each episode plays a gold trajectory (tool calls, the facts to communicate, score, dispose) through the load
balancer, then the next begins. Reported: throughput, p50/p99 latency per request kind, errors (and any
reward other than 1), and resources sampled at the start of the steady state and at the end — server memory,
open connections, PostgreSQL connections and sandbox slots, live sandboxes. Goal: no errors, nothing that
grows once steady.

Bounded: loopback only, private databases created and dropped, stops by itself (10 minutes by default):

    python benchmarks/soak.py [--duration-s 600] [--episodes 144] [--workers 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import private_databases
from benchmarks.topology import Topology, local_topology
from env_server.settings import DEFAULT_PG_URL
from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.errors import ClientError
from shared.tasks import Task

API_KEY = "soak-key"


@dataclass
class Tally:
    """Everything the episode loops record."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    wrong_rewards: Counter[str] = field(default_factory=Counter)
    episodes: int = 0


def gold_tasks(client: GroundstateClient) -> list[Task]:
    """Every domain's test action tasks without rubric questions (no judge here), with their gold."""
    tasks = []
    for domain in client.domains():
        for t in client.tasks(domain=domain.name, split="test"):
            if t.kind == "action" and not t.has_rubric:
                full = client.task(t.id, include_gold=True)
                if isinstance(full, Task) and full.gold_actions:
                    tasks.append(full)
    return tasks


async def timed(tally: Tally, kind: str, call: Any) -> Any:
    start = time.perf_counter()
    try:
        return await call
    finally:
        tally.latencies[kind].append(time.perf_counter() - start)


async def episode_loop(
    client: AsyncGroundstateClient, tasks: list[Task], offset: int, deadline: float, tally: Tally
) -> None:
    """Play gold trajectories back to back until the deadline; an error is counted and the loop goes on."""
    i = offset
    while time.monotonic() < deadline:
        task = tasks[i % len(tasks)]
        i += 1
        episode_id = None
        try:
            started = await timed(tally, "start", client.start_episode(task.id))
            episode_id = started.episode_id
            for action in task.gold_actions:
                await timed(tally, "tool_call", client.call_tool(episode_id, action.name, action.arguments))
            if task.communicate:
                message = "To sum up: " + "; ".join(task.communicate)
                await timed(tally, "message", client.send_message(episode_id, message))
            score = await timed(tally, "score", client.score(episode_id))
            if score.reward != 1:
                tally.wrong_rewards[task.id] += 1
            await timed(tally, "dispose", client.dispose(episode_id))
            tally.episodes += 1
        except ClientError as exc:
            tally.errors[f"{type(exc).__name__}: {str(exc)[:120]}"] += 1


def _descendants(root: int) -> list[int]:
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, pp in parent.items() if pp == pid]
        found += children
        frontier += children
    return found


def _rss_mib(pid: int) -> tuple[str, float]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "", 0.0
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return cmdline, int(match.group(1)) / 1024 if match else 0.0


def _established(ports: set[int]) -> int:
    """Established TCP connections whose local port is one of `ports` (the listening side)."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[3] == "01" and int(cols[1].split(":")[1], 16) in ports:
            count += 1
    return count


def sample(topology: Topology, store_url: str, sandbox_url: str) -> dict[str, float]:
    """Resources of the running topology right now."""
    servers = haproxy = 0.0
    for pid in _descendants(topology.pid):
        cmdline, rss = _rss_mib(pid)
        if "haproxy" in cmdline:
            haproxy += rss
        elif "groundstate" in cmdline or "multiprocessing" in cmdline:
            servers += rss
    ports = {int(u.rsplit(":", 1)[1]) for u in topology.replica_urls}
    live = 0.0
    for url in topology.replica_urls:
        scraped = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {API_KEY}"}).text
        found = re.search(r"^groundstate_live_sandboxes (\S+)$", scraped, re.M)
        live += float(found.group(1)) if found else 0.0
    dbs = [u.rsplit("/", 1)[1] for u in (store_url, sandbox_url)]
    engine = create_engine(sandbox_url)
    try:
        with engine.connect() as conn:
            pg_conns = conn.execute(
                text("SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(:dbs)"), {"dbs": dbs}
            ).scalar_one()
            slots, held = conn.execute(
                text("SELECT count(*), count(episode_id) FROM public.gs_sandbox_slots")
            ).one()
    finally:
        engine.dispose()
    return {
        "server_rss_mib": round(servers, 1),
        "haproxy_rss_mib": round(haproxy, 1),
        "client_connections_to_lb": _established({int(topology.lb_url.rsplit(":", 1)[1])}),
        "lb_connections_to_replicas": _established(ports),
        "postgres_connections": int(pg_conns) - 1,  # not counting this query's own
        "sandbox_slots": int(slots),
        "sandbox_slots_held": int(held),
        "live_sandboxes": live,
    }


async def soak(
    topology: Topology, args: argparse.Namespace, store_url: str, sandbox_url: str
) -> dict[str, Any]:
    with GroundstateClient(topology.lb_url, api_key=API_KEY) as sync_client:
        tasks = gold_tasks(sync_client)
    tally = Tally()
    start = time.monotonic()
    deadline = start + args.duration_s
    steady_at = start + args.duration_s * args.warmup_fraction
    samples: list[tuple[float, dict[str, float]]] = []

    async def sampler() -> None:
        while time.monotonic() < deadline:
            await asyncio.sleep(args.sample_s)
            taken = await asyncio.to_thread(sample, topology, store_url, sandbox_url)
            samples.append((time.monotonic() - start, taken))
            last_error = next(reversed(tally.errors), "")[:80]
            print(
                f"{samples[-1][0]:6.0f}s  episodes {tally.episodes:6d}  errors {sum(tally.errors.values())} "
                f"{last_error}  " + "  ".join(f"{k} {v}" for k, v in taken.items()),
                flush=True,
            )

    async with AsyncGroundstateClient(
        topology.lb_url, api_key=API_KEY, max_connections=args.episodes, timeout=120.0
    ) as client:
        loops = [episode_loop(client, tasks, i * 7, deadline, tally) for i in range(args.episodes)]
        await asyncio.gather(sampler(), *loops)
    elapsed = time.monotonic() - start
    steady = [s for t, s in samples if t >= steady_at - start] or [s for _, s in samples]
    requests = sum(len(v) for v in tally.latencies.values())
    return {
        "duration_s": round(elapsed, 1),
        "concurrent_episodes": args.episodes,
        "workers_per_replica": args.workers,
        "sandbox_idle_s": args.sandbox_idle_s,
        "tasks": len(tasks),
        "episodes": tally.episodes,
        "episodes_per_s": round(tally.episodes / elapsed, 2),
        "requests_per_s": round(requests / elapsed, 1),
        "latency_ms": {
            kind: {"p50": round(_pct(v, 50) * 1000, 1), "p99": round(_pct(v, 99) * 1000, 1), "n": len(v)}
            for kind, v in sorted(tally.latencies.items())
        },
        "errors": dict(tally.errors),
        "wrong_rewards": dict(tally.wrong_rewards),
        "steady_start": steady[0] if steady else {},
        "end": steady[-1] if steady else {},
        "max_in_steady_state": {k: max(s[k] for s in steady) for k in steady[0]} if steady else {},
    }


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration-s", type=float, default=600.0, help="how long to soak (default 10 min)")
    parser.add_argument("--episodes", type=int, default=144, help="concurrent episodes")
    parser.add_argument("--workers", type=int, default=1, help="worker processes per replica")
    parser.add_argument("--sample-s", type=float, default=15.0, help="resource sampling interval")
    parser.add_argument(
        "--warmup-fraction", type=float, default=0.2, help="share of the run before steady state"
    )
    parser.add_argument(
        "--pg-url",
        default=DEFAULT_PG_URL,
        help="a PostgreSQL database to create the soak's private databases from",
    )
    parser.add_argument(
        "--sandbox-idle-s",
        type=float,
        default=120.0,
        help="GROUNDSTATE_SANDBOX_IDLE_S of the replicas: handles other replicas keep to disposed episodes' "
        "sandboxes go after this long, so the live count levels off within the run",
    )
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    # Stopped early (Ctrl-C, or SIGTERM; a background job starts with SIGINT ignored): still stop the
    # topology and drop the private databases.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if "127.0.0.1" not in args.pg_url and "localhost" not in args.pg_url:
        parser.error("--pg-url must be on loopback: the soak never leaves this machine")
    with (
        private_databases(args.pg_url, "gs_soak", 2) as (store_url, sandbox_url),
        tempfile.TemporaryDirectory(prefix="gs-soak-") as run_dir,
        local_topology(
            store_url,
            sandbox_url,
            Path(run_dir),
            workers=args.workers,
            env={"GROUNDSTATE_API_KEY": API_KEY, "GROUNDSTATE_SANDBOX_IDLE_S": str(args.sandbox_idle_s)},
        ) as topology,
    ):
        report = asyncio.run(soak(topology, args, store_url, sandbox_url))
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
