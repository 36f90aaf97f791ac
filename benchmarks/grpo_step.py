"""A GRPO step's worth of episodes at once, closed-loop like a trainer, against `groundstate serve` over HTTP.

A Verl step starts 128-512 prompts x 8 samples together and waits for the last one. Here N episodes (default
1,024) start in one burst over real tasks of every served domain; each plays its task's reference
conversation (the agent's messages and gold calls, `GET /v1/tasks/{id}/reference`), sleeping a simulated
model think time before every turn (log-normal: median `--think-median`, long tail `--think-sigma`), then
scores. As a trainer's fleet does, 1% of episodes are abandoned half-way (never scored nor disposed: a dead
rollout worker) and 1% of write calls are resent after a client timeout (the first answer is dropped, the
same call with the same `call_id` sent again). Driven by the project's own `AsyncGroundstateClient`
(aiohttp transport, one connection per episode), which retries a 503 `over-capacity` after its
`Retry-After`: such refusals are deliberate and counted apart, from the server's `/metrics`.

The same load (same plans, same think times) is then played against the no-op floor of
`benchmarks/floor.py` (the same routes and models answering bodies recorded from this server): if the floor
answers in a few milliseconds under the same load, the client is not the bottleneck.

Reported per N, for the server and the floor: p50/p95/p99 per route, errors by kind, episodes/s, the
rewards, server CPU-seconds per episode and memory per live episode (the server process and its workers,
psutil), the time to admit the burst (the last start answered), and tool-call p99 by live episodes. The
knee is the smallest N of `--sweep` whose tool-call p99 passes 100 ms. The JSON goes to `--out`.

    python benchmarks/grpo_step.py [--episodes 1024 | --sweep 128,256,512,1024] [--backend sqlite|postgresql]
        [--think-median 2.0] [--think-sigma 0.8] [--tasks-per-domain 4] [--workers 1]
        [--server-env GROUNDSTATE_MAX_LIVE_EPISODES=512 ...] [--out benchmarks/results/grpo_step.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._measures import ServerStats, by_live, quantiles
from benchmarks._serve import serving_process, start_process, stop
from benchmarks.floor import CANNED_ENV
from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.errors import ApiError, ClientError
from shared.models import ReferenceStep

ROUTES = ("start", "tool call", "message", "score")
#: Tool-call p99 past which the server is past its knee (the issue's threshold).
KNEE_P99_S = 0.100
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Plan:
    """One task's agent side: its reference steps, and which of its tools write."""

    task_id: str
    domain: str
    steps: list[ReferenceStep]
    writes: frozenset[str]


def load_plans(url: str, per_domain: int) -> list[Plan]:
    """The first `per_domain` tasks (test split first) of every served domain that has a reference."""
    plans = []
    with GroundstateClient(url) as client:
        for domain in client.domains():
            kinds = client.domain(domain.name).tool_kinds
            writes = frozenset(n for n, k in kinds.items() if k == "write")
            tasks = client.tasks(domain=domain.name, split="test") or client.tasks(domain=domain.name)
            for task in tasks[:per_domain]:
                steps = [s for s in client.reference(task.id).steps if s.role == "assistant"]
                if steps:
                    plans.append(Plan(task.id, domain.name, steps, writes))
    return plans


def record(url: str, plans: list[Plan], path: Path) -> dict[str, float | None]:
    """Play every plan once, alone, without think time: save the answers for the floor, return each reward.

    This also warms the server's templates, as a trainer's first step would.
    """
    canned: dict[str, Any] = {}
    rewards: dict[str, float | None] = {}
    with GroundstateClient(url) as client:
        for plan in plans:
            started = client.start_episode(plan.task_id)
            calls = []
            for step in plan.steps:
                if step.tool_call is not None:
                    calls.append(
                        client.call_tool(started.episode_id, step.tool_call.name, step.tool_call.arguments)
                    )
                else:
                    client.send_message(started.episode_id, step.content or "")
            score = client.score(started.episode_id)
            rewards[plan.task_id] = score.reward
            canned[plan.task_id] = {
                "started": started.model_dump(mode="json", exclude={"episode_id"}),
                "calls": [c.model_dump(mode="json") for c in calls] or [{"name": "none", "output": None}],
                "score": score.model_dump(mode="json"),
            }
    path.write_text(json.dumps(canned))
    return rewards


def warm(url: str, plans: list[Plan]) -> None:
    """Start and dispose one episode of each task: a fresh server builds its templates before the burst."""
    with GroundstateClient(url) as client:
        for plan in plans:
            client.dispose(client.start_episode(plan.task_id).episode_id)


# -- the burst ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fate:
    """What the trainer does with one episode: its plan, think times, abandonment and resent writes."""

    plan: Plan
    think_s: list[float]
    abandon: bool
    resend: list[bool]


def fates(plans: list[Plan], n: int, args: argparse.Namespace) -> list[Fate]:
    """N episodes cycling over the plans, with their random draws fixed by `--seed` (same for the floor)."""
    rng = random.Random(args.seed)
    mu = math.log(args.think_median)
    out = []
    for i in range(n):
        plan = plans[i % len(plans)]
        think = [rng.lognormvariate(mu, args.think_sigma) for _ in range(len(plan.steps) + 1)]
        resend = [rng.random() < args.resend_rate for _ in plan.steps]
        out.append(Fate(plan, think, rng.random() < args.abandon_rate, resend))
    return out


@dataclass
class Burst:
    """What one burst measured on the client's side."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {r: [] for r in ROUTES})
    tool_calls_at_live: list[tuple[int, float]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: dict[str, str] = field(default_factory=dict)  # kind -> its first message
    rewards: Counter[str] = field(default_factory=Counter)
    live: int = 0
    peak_live: int = 0
    admitted_s: float = 0.0
    scored: int = 0
    abandoned: int = 0
    resent: int = 0
    resent_rewards: Counter[str] = field(default_factory=Counter)


async def timed(burst: Burst, route: str, call: Any) -> Any:
    """Await a client call, recording its latency under `route` (a failure is recorded by the caller)."""
    t = time.perf_counter()
    result = await call
    elapsed = time.perf_counter() - t
    burst.latencies[route].append(elapsed)
    if route == "tool call":
        burst.tool_calls_at_live.append((burst.live, elapsed))
    return result


async def play(client: AsyncGroundstateClient, fate: Fate, burst: Burst, t0: float) -> None:
    """One episode as a trainer plays it; a client error ends it and is counted by kind."""
    try:
        started = await timed(burst, "start", client.start_episode(fate.plan.task_id))
    except ClientError as exc:
        failed(burst, exc)
        return
    burst.admitted_s = max(burst.admitted_s, time.perf_counter() - t0)
    burst.live += 1
    burst.peak_live = max(burst.peak_live, burst.live)
    eid, resent = started.episode_id, False
    try:
        steps = fate.plan.steps[: len(fate.plan.steps) // 2] if fate.abandon else fate.plan.steps
        for step, think, resend in zip(steps, fate.think_s, fate.resend, strict=False):
            await asyncio.sleep(think)
            if step.tool_call is None:
                await timed(burst, "message", client.send_message(eid, step.content or ""))
                continue
            call_id = uuid.uuid4().hex[:16]
            name, arguments = step.tool_call.name, step.tool_call.arguments
            if resend and name in fate.plan.writes:  # the answer is lost to a client timeout: send it again
                await timed(burst, "tool call", client.call_tool(eid, name, arguments, call_id=call_id))
                burst.resent += 1
                resent = True
            await timed(burst, "tool call", client.call_tool(eid, name, arguments, call_id=call_id))
        if fate.abandon:
            burst.abandoned += 1
            return
        await asyncio.sleep(fate.think_s[-1])
        score = await timed(burst, "score", client.score(eid))
        burst.scored += 1
        burst.rewards[str(score.reward)] += 1
        if resent:
            burst.resent_rewards[str(score.reward)] += 1
    except ClientError as exc:
        failed(burst, exc)
    finally:
        burst.live -= 1


def failed(burst: Burst, exc: ClientError) -> None:
    """Count a failure by kind, keeping the first message of each kind."""
    burst.errors[kind(exc)] += 1
    burst.error_examples.setdefault(kind(exc), str(exc)[:300])


def kind(exc: ClientError) -> str:
    """An error's kind for the report: `status code` of an API error, else the exception's class."""
    return f"{exc.status} {exc.code}" if isinstance(exc, ApiError) else type(exc).__name__


async def run_burst(
    url: str, pid: int, work: list[Fate], databases: list[str] | None = None
) -> tuple[Burst, float, ServerStats]:
    """All of `work` at once; returns what the client saw, the wall time and the server's stats."""
    burst, stats = Burst(), ServerStats(pid, databases)
    async with AsyncGroundstateClient(url, max_connections=len(work), timeout=600.0) as client:
        sampler = asyncio.create_task(stats.sample(lambda: burst.live))
        t0 = time.perf_counter()
        await asyncio.gather(*(play(client, fate, burst, t0) for fate in work))
        wall = time.perf_counter() - t0
        sampler.cancel()
    if databases:
        stats.see_pg_backends()
    return burst, wall, stats


# -- the report --------------------------------------------------------------------------------------------


def refused(url: str) -> float:
    """Requests refused as over capacity so far (`groundstate_admissions_refused_total`, all limits)."""
    text = httpx.get(url + "/metrics").text
    found = re.findall(r"^groundstate_admissions_refused_total(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M)
    return sum(float(v) for v in found)


def report(burst: Burst, wall: float, stats: ServerStats, refusals: float) -> dict[str, Any]:
    """One burst's figures, as they go in the JSON."""
    cpu = stats.cpu() - stats.cpu0
    pg_cpu = stats.pg_cpu()
    peak_rss = max((rss for _, rss in stats.samples), default=stats.rss0)
    episodes = burst.scored + burst.abandoned
    return {
        "wall_s": round(wall, 2),
        "time_to_admit_s": round(burst.admitted_s, 2),
        "episodes_per_s": round(burst.scored / wall, 2) if wall else None,
        "scored": burst.scored,
        "abandoned": burst.abandoned,
        "resent_writes": burst.resent,
        "rewards": dict(burst.rewards),
        "rewards_of_episodes_with_a_resent_write": dict(burst.resent_rewards),
        "errors": dict(burst.errors),
        "error_examples": burst.error_examples,
        "over_capacity_refusals": refusals,
        "routes": {r: quantiles(v) for r, v in burst.latencies.items()},
        "tool_call_by_live": by_live(burst.tool_calls_at_live),
        "peak_live": burst.peak_live,
        "server_cpu_s": round(cpu, 2),
        "server_cpu_s_per_episode": round(cpu / episodes, 4) if episodes else None,
        "postgresql_cpu_s_per_episode": round(pg_cpu / episodes, 4)
        if episodes and pg_cpu is not None
        else None,
        "server_rss_mb_idle": round(stats.rss0 / 2**20, 1),
        "server_rss_mb_peak": round(peak_rss / 2**20, 1),
        "memory_kb_per_live_episode": (
            round((peak_rss - stats.rss0) / 1024 / burst.peak_live, 1) if burst.peak_live else None
        ),
    }


def line(label: str, n: int, r: dict[str, Any]) -> str:
    """One markdown row of the summary."""
    tool, start = r["routes"]["tool call"], r["routes"]["start"]
    errors = ", ".join(f"{k}: {v}" for k, v in r["errors"].items()) or "0"
    return (
        f"| {label} | {n} | {r['wall_s']} | {r['time_to_admit_s']} | {r['episodes_per_s']} "
        f"| {start['p50_ms']} / {start['p99_ms']} | {tool['p50_ms']} / {tool['p95_ms']} / {tool['p99_ms']} "
        f"| {errors} | {r['over_capacity_refusals']:g} | {r['server_cpu_s_per_episode']} "
        f"| {r['memory_kb_per_live_episode']} | {r['rewards']} |"
    )


def measure(args: argparse.Namespace, n: int, work_dir: Path) -> dict[str, Any]:
    """One N: a fresh server (warmed up), its burst, then the floor under the same load."""
    env = dict(e.split("=", 1) for e in args.server_env)
    with serving_process(work_dir, args.backend, args.workers, env=env) as served:
        url = served.url
        plans = load_plans(url, args.tasks_per_domain)
        canned = work_dir / "canned.json"
        alone = record(url, plans, canned)
        warm(url, plans)
        work = fates(plans, n, args)
        refused0 = refused(url)
        burst, wall, stats = asyncio.run(run_burst(url, served.proc.pid, work, served.databases))
        server = report(burst, wall, stats, refused(url) - refused0)
    floor_proc, floor_url = start_process(
        [sys.executable, str(ROOT / "benchmarks" / "floor.py")],
        {**os.environ, CANNED_ENV: str(canned.resolve())},
        work_dir / "floor.log",
    )
    try:
        burst, wall, stats = asyncio.run(run_burst(floor_url, floor_proc.pid, work))
        floor = report(burst, wall, stats, 0.0)
    finally:
        stop(floor_proc)
    rewards_alone = Counter(str(alone[f.plan.task_id]) for f in work if not f.abandon)
    return {
        "episodes": n,
        "tasks": len(plans),
        "mean_turns_per_episode": round(sum(len(f.plan.steps) for f in work) / len(work), 2),
        "server": server,
        "floor": floor,
        "rewards_alone": rewards_alone,
    }


def knee(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first N (and its peak live episodes) whose tool-call p99 passes 100 ms; None if none does."""
    for r in results:
        p99 = r["server"]["routes"]["tool call"]["p99_ms"]
        if p99 is not None and p99 > 1000 * KNEE_P99_S:
            return {"episodes": r["episodes"], "peak_live": r["server"]["peak_live"], "tool_call_p99_ms": p99}
    return None


def relative(arg: str) -> str:
    """An argument, an absolute path made relative to the working directory (the JSON holds none)."""
    return os.path.relpath(arg) if os.path.isabs(arg) else arg


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=1024, help="the burst's size (without --sweep)")
    p.add_argument(
        "--sweep", default="", help="burst sizes to run one after the other, e.g. 128,256,512,1024"
    )
    p.add_argument("--backend", default="sqlite", choices=["sqlite", "postgresql"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--think-median", type=float, default=2.0, help="median model think time per turn, s")
    p.add_argument("--think-sigma", type=float, default=0.8, help="log-normal sigma of the think time")
    p.add_argument("--abandon-rate", type=float, default=0.01)
    p.add_argument("--resend-rate", type=float, default=0.01, help="share of write calls resent")
    p.add_argument("--tasks-per-domain", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for the server (repeat)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/grpo_step.json"))
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the bursts, print the summary, write the JSON; returns what was written."""
    args = parse(argv)
    sizes = [int(s) for s in args.sweep.split(",") if s] or [args.episodes]
    work_dir = Path(".groundstate/bench-grpo-step")
    load = os.getloadavg()
    results = [measure(args, n, work_dir) for n in sorted(sizes)]
    out = {
        "command": "python benchmarks/grpo_step.py "
        + " ".join(map(relative, sys.argv[1:] if argv is None else argv)),
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load]},
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "out"},
        "results": results,
        "knee": knee(results),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{args.backend}, {args.workers} worker(s), think median {args.think_median} s; {out['machine']}")
    print(
        "| server | N | wall s | admit s | episodes/s | start p50/p99 ms | tool call p50/p95/p99 ms | errors "
        "| 503 refusals | CPU s/episode | KB/live episode | rewards |"
    )
    print("|---" * 12 + "|")
    for r in results:
        print(line("groundstate", r["episodes"], r["server"]))
        print(line("no-op floor", r["episodes"], r["floor"]))
    print(f"knee (tool-call p99 > {KNEE_P99_S * 1000:.0f} ms): {out['knee'] or 'not reached'}")
    return out


if __name__ == "__main__":
    main()
