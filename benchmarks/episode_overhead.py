"""Episode overhead over HTTP on loopback: create, 10 tool calls, score — per phase and end to end.

Starts a real `groundstate serve` per backend, drives it with the async client at concurrency 1 and 32, and
prints p50/p99 per phase and episodes/s. Then times the same episode on the episode service in process (the
server's own work, without HTTP and the client sharing the CPU), and measures how sandbox creation scales
with seed size (1x vs 10x rows) on a synthetic domain, in process.

    python benchmarks/episode_overhead.py [--episodes 200] [--backends sqlite,postgresql] [--task ID]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import start_server
from benchmarks._synthetic import synthetic_domain
from env_server.settings import DEFAULT_PG_URL
from shared.client import AsyncGroundstateClient, GroundstateClient

PG_URL = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
TOOL_CALLS = 10


def pct(values: list[float], q: float) -> float:
    """The q-quantile in milliseconds."""
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def pick_call(url: str, task_id: str) -> tuple[str, dict]:
    """The task's first read-only gold call: realistic arguments for the 10 tool calls."""
    with GroundstateClient(url) as c:
        task = c.task(task_id, include_gold=True)
        kinds = c.domain(task.domain).tool_kinds
    read = next(a for a in task.gold_actions if kinds[a.name] == "read")  # type: ignore[union-attr]
    return read.name, read.arguments


async def one_episode(
    client: AsyncGroundstateClient, task_id: str, call: tuple[str, dict], phases: dict[str, list[float]]
) -> None:
    t0 = time.perf_counter()
    eid = (await client.start_episode(task_id)).episode_id
    t1 = time.perf_counter()
    for _ in range(TOOL_CALLS):
        t = time.perf_counter()
        await client.call_tool(eid, call[0], call[1])
        phases["tool_call"].append(time.perf_counter() - t)
    t2 = time.perf_counter()
    await client.score(eid)
    t3 = time.perf_counter()
    phases["create"].append(t1 - t0)
    phases["score"].append(t3 - t2)
    phases["episode"].append(t3 - t0)


async def run_load(url: str, task_id: str, call: tuple[str, dict], episodes: int, concurrency: int) -> dict:
    phases: dict[str, list[float]] = {"create": [], "tool_call": [], "score": [], "episode": []}
    gate = asyncio.Semaphore(concurrency)
    async with AsyncGroundstateClient(url, max_connections=concurrency) as client:

        async def guarded() -> None:
            async with gate:
                await one_episode(client, task_id, call, phases)

        await asyncio.gather(*(guarded() for _ in range(min(episodes, 5))))  # warm-up: templates, caches
        for v in phases.values():
            v.clear()
        start = time.perf_counter()
        await asyncio.gather(*(guarded() for _ in range(episodes)))
        elapsed = time.perf_counter() - start
    return {"phases": phases, "eps": episodes / elapsed}


def service_time(backends: list[str], task_id: str, episodes: int) -> None:
    """The same episode on the episode service in process: server work without HTTP and client."""
    import tempfile

    from benchmarks.server_time import timed_episode
    from env_server.app import build_service
    from env_server.settings import Settings

    print("\nserver time per episode (episode service in process, no HTTP), p50/p99 ms")
    print(f"{'backend':<12}{'create':>16}{'tool call':>16}{'score':>16}{'episode':>16}")
    for backend in backends:
        store = f"sqlite:///{tempfile.mkdtemp()}/store.db"
        url = "sqlite://" if backend == "sqlite" else PG_URL
        svc = build_service(Settings(store_url=store, sandbox_url=url))
        task = svc.registry.task(task_id)
        kinds = {t.name: t.kind for t in svc.registry.domain(task.domain).tools}
        read = next(a for a in task.gold_actions if kinds[a.name] == "read")
        phases: dict[str, list[float]] = {"create": [], "tool_call": [], "score": [], "episode": []}
        for i in range(episodes + 5):
            create, calls, score, episode = timed_episode(svc, task_id, read.name, read.arguments)
            if i >= 5:  # the first episodes build templates and warm caches
                phases["create"].append(create)
                phases["tool_call"] += calls
                phases["score"].append(score)
                phases["episode"].append(episode)
        cells = "".join(f"{pct(v, 0.5):>8.1f}/{pct(v, 0.99):<7.1f}" for v in phases.values())
        print(f"{backend:<12}{cells}")
        svc.sandboxes.close()
        svc.store.engine.dispose()


def creation_scaling(backends: list[str]) -> None:
    from env_server.sandbox import make_sandbox_engine
    from env_server.sandbox.template import Template

    print("\nsandbox creation vs seed size (synthetic domain, in process, 200 creations each)")
    print(f"{'backend':<12}{'rows':>8}{'p50 ms':>10}{'p99 ms':>10}")
    for backend in backends:
        engine = make_sandbox_engine("sqlite://" if backend == "sqlite" else PG_URL)
        base = None
        for rows in (1_000, 10_000):
            template = Template(domain=synthetic_domain(rows))
            engine.create(uuid.uuid4().hex, template).dispose()  # build the template
            times = []
            for _ in range(200):
                t = time.perf_counter()
                sandbox = engine.create(uuid.uuid4().hex, template)
                times.append(time.perf_counter() - t)
                sandbox.dispose()
            p50 = pct(times, 0.5)
            base = base or p50
            print(f"{backend:<12}{rows:>8}{p50:>10.2f}{pct(times, 0.99):>10.2f}   ({p50 / base:.1f}x of 1k)")
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--task", default="hotel-corp-modify-approval-001")
    args = parser.parse_args()
    backends = args.backends.split(",")
    store_dir = Path(".groundstate/bench")
    store_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"episode = create + {TOOL_CALLS} tool calls + score; task {args.task}; {args.episodes} episodes/row"
    )
    print(
        f"{'backend':<12}{'conc':>5}{'create p50/p99':>18}{'tool p50/p99':>16}{'score p50/p99':>17}"
        f"{'episode p50':>13}{'episodes/s':>12}"
    )
    for backend in backends:
        sandbox_url = "sqlite://" if backend == "sqlite" else PG_URL
        proc, url = start_server(
            store_dir, sandbox_url=sandbox_url, store_name=f"store-{uuid.uuid4().hex[:6]}.db"
        )
        try:
            call = pick_call(url, args.task)
            for concurrency in (1, 32):
                r = asyncio.run(run_load(url, args.task, call, args.episodes, concurrency))
                p = r["phases"]
                print(
                    f"{backend:<12}{concurrency:>5}"
                    f"{pct(p['create'], 0.5):>9.1f}/{pct(p['create'], 0.99):<8.1f}"
                    f"{pct(p['tool_call'], 0.5):>7.1f}/{pct(p['tool_call'], 0.99):<8.1f}"
                    f"{pct(p['score'], 0.5):>8.1f}/{pct(p['score'], 0.99):<8.1f}"
                    f"{pct(p['episode'], 0.5):>12.1f}{r['eps']:>12.1f}"
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    service_time(backends, args.task, args.episodes)
    creation_scaling(backends)


if __name__ == "__main__":
    main()
