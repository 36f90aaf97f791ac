"""The floor of this stack, and `groundstate serve` measured against it in the same run.

The floor is a no-op FastAPI app with the episode path's routes (create, tool call, message, score,
`/healthz`), the same wire models from `shared.models` in and out, served by uvicorn with the server's
settings. It answers with the bodies the real server gave for the same calls (recorded first), so parsing,
validation and encoding cost the same; it does no work of its own. Both servers are then driven by the same
clients, alternating round by round so the machine's load falls on both alike, replaying the gold
trajectories of the hotel, retail, travel and insurance test tasks (each cycled to 10 calls); every figure
is printed as a ratio against the floor.

Then scale-out: the throughput at concurrency 16 again, for 1, 2 and 4 workers (`--workers`) on SQLite
sandboxes and store (a worker that did not serve an episode's last calls catches up by replaying them from
the store) and on PostgreSQL sandboxes and store (any worker serves any request: no sticky sessions),
each against the floor's throughput.

    python benchmarks/floor.py [--rounds 3] [--tasks-per-domain 6] [--episodes 160]
                               [--workers 1,2,4] [--backends sqlite,postgresql] [--scale-episodes 96]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from fastapi import FastAPI, status

from benchmarks._serve import serving, start_process, start_server, stop
from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.models import (
    EpisodeStarted,
    MessageRequest,
    ScoreResult,
    StartEpisodeRequest,
    ToolCallRequest,
    ToolCallResult,
    UserReply,
)
from shared.tasks import Task

DOMAINS = ("hotel", "retail", "travel", "insurance")
TOOL_CALLS = 10
#: Where the floor process finds the recorded answers it replays (a JSON file, see `record`).
CANNED_ENV = "GROUNDSTATE_FLOOR_CANNED"
#: Concurrent episodes of the throughput figures.
CONCURRENCY = 16


# -- the floor app -----------------------------------------------------------------------------------------


def create_floor_app() -> FastAPI:
    """The no-op app: the episode routes and models of the real server, answering recorded bodies."""
    canned: dict[str, dict[str, Any]] = json.loads(Path(os.environ[CANNED_ENV]).read_text())
    episodes: dict[str, list[Any]] = {}  # episode id -> [task id, tool calls so far]
    app = FastAPI(title="groundstate floor")

    @app.post("/v1/episodes", status_code=status.HTTP_201_CREATED)
    async def start_episode(body: StartEpisodeRequest) -> EpisodeStarted:
        episode_id = uuid.uuid4().hex
        episodes[episode_id] = [body.task_id, 0]
        return EpisodeStarted.model_validate(canned[body.task_id]["started"] | {"episode_id": episode_id})

    @app.post("/v1/episodes/{episode_id}/tool_calls")
    async def call_tool(episode_id: str, body: ToolCallRequest) -> ToolCallResult:
        state = episodes[episode_id]
        calls = canned[state[0]]["calls"]
        state[1] += 1
        return ToolCallResult.model_validate(calls[(state[1] - 1) % len(calls)])

    @app.post("/v1/episodes/{episode_id}/messages")
    async def send_message(episode_id: str, body: MessageRequest) -> UserReply:
        return UserReply(content="Thanks, that is all.", done=True)

    @app.post("/v1/episodes/{episode_id}/score")
    async def score_episode(episode_id: str) -> ScoreResult:
        return ScoreResult.model_validate(canned[episodes.pop(episode_id)[0]]["score"])

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "sandbox_backend": "sqlite"}

    return app


def serve_floor(port: int) -> None:
    """Serve the floor as `groundstate serve` serves the server (uvicorn, one worker, its settings)."""
    import uvicorn

    uvicorn.run(
        "benchmarks.floor:create_floor_app",
        factory=True,
        host="127.0.0.1",
        port=port,
        workers=1,
        log_level="warning",
        timeout_keep_alive=120,
    )


# -- the workload ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Episode:
    """One task's episode: its gold calls cycled to `TOOL_CALLS` calls."""

    task_id: str
    calls: list[tuple[str, dict[str, Any]]]


def gold_episodes(url: str, per_domain: int, tool_calls: int = TOOL_CALLS) -> list[Episode]:
    """The first `per_domain` test tasks with gold calls of each domain, their gold calls cycled."""
    episodes = []
    with GroundstateClient(url) as client:
        for domain in DOMAINS:
            picked = 0
            for public in client.tasks(domain=domain, split="test"):
                task = client.task(public.id, include_gold=True)
                assert isinstance(task, Task)
                if not task.gold_actions or picked == per_domain:
                    continue
                gold = [(a.name, a.arguments) for a in task.gold_actions]
                episodes.append(Episode(task.id, list(itertools.islice(itertools.cycle(gold), tool_calls))))
                picked += 1
    return episodes


def record(url: str, episodes: list[Episode], path: Path) -> dict[str, dict[str, Any]]:
    """Play each episode once on the real server and save its answers for the floor to give."""
    canned: dict[str, dict[str, Any]] = {}
    with GroundstateClient(url) as client:
        for ep in episodes:
            started = client.start_episode(ep.task_id)
            calls = [client.call_tool(started.episode_id, name, args) for name, args in ep.calls]
            score = client.score(started.episode_id)
            canned[ep.task_id] = {
                "started": started.model_dump(mode="json", exclude={"episode_id"}),
                "calls": [c.model_dump(mode="json") for c in calls],
                "score": score.model_dump(mode="json"),
            }
    path.write_text(json.dumps(canned))
    return canned


def start_floor(canned: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Serve the floor with the answers recorded in `canned`; return the process and URL."""
    env = {**os.environ, CANNED_ENV: str(canned.resolve())}
    return start_process([sys.executable, str(Path(__file__).resolve())], env, log)


@dataclass
class Timings:
    """Seconds per request kind, per 10-call episode, and episodes/s per round at concurrency 16."""

    requests: dict[str, list[float]] = field(
        default_factory=lambda: {"create": [], "tool call": [], "score": [], "healthz": []}
    )
    episode: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)


def sequential(url: str, episodes: list[Episode], into: Timings) -> None:
    """Every episode once at concurrency 1 (sync client), then as many `/healthz` requests."""
    with GroundstateClient(url) as client:
        for ep in episodes:
            t0 = time.perf_counter()
            eid = client.start_episode(ep.task_id).episode_id
            into.requests["create"].append(time.perf_counter() - t0)
            for name, args in ep.calls:
                t = time.perf_counter()
                client.call_tool(eid, name, args)
                into.requests["tool call"].append(time.perf_counter() - t)
            t = time.perf_counter()
            client.score(eid)
            into.requests["score"].append(time.perf_counter() - t)
            into.episode.append(time.perf_counter() - t0)
    with httpx.Client(base_url=url) as http:
        for _ in range(len(episodes)):
            t = time.perf_counter()
            http.get("/healthz").raise_for_status()
            into.requests["healthz"].append(time.perf_counter() - t)


async def concurrent(url: str, episodes: list[Episode], count: int, concurrency: int) -> float:
    """`count` episodes, `concurrency` at a time (async client); returns episodes/s."""
    gate = asyncio.Semaphore(concurrency)
    async with AsyncGroundstateClient(url, max_connections=concurrency) as client:

        async def one(ep: Episode) -> None:
            async with gate:
                eid = (await client.start_episode(ep.task_id)).episode_id
                for name, args in ep.calls:
                    await client.call_tool(eid, name, args)
                await client.score(eid)

        work = list(itertools.islice(itertools.cycle(episodes), count))
        start = time.perf_counter()
        await asyncio.gather(*(one(ep) for ep in work))
        return count / (time.perf_counter() - start)


def scale_out(
    work_dir: Path, episodes: list[Episode], count: int, backend: str, workers: int
) -> tuple[list[float], float]:
    """Throughput at concurrency 16 of `groundstate serve` with `workers` workers on `backend`.

    Returns two measured runs' episodes/s (after a warm-up run) and the load average at the start.
    """
    load = os.getloadavg()[0]
    with serving(work_dir, backend, workers) as url:
        asyncio.run(concurrent(url, episodes, 2 * CONCURRENCY, CONCURRENCY))  # templates, slots, caches
        return [asyncio.run(concurrent(url, episodes, count, CONCURRENCY)) for _ in range(2)], load


# -- the report --------------------------------------------------------------------------------------------


def median_ms(values: list[float]) -> float:
    """The median in milliseconds."""
    return 1000 * statistics.median(values)


def table(server: Timings, floor: Timings) -> Iterator[str]:
    """The figures of both and their ratio, one markdown row each."""
    columns = [*server.requests, "10-call episode", "episodes/s, 16 at once"]
    yield "| | " + " | ".join(columns) + " |"
    yield "|---" * (len(columns) + 1) + "|"

    def cells(t: Timings) -> list[float]:
        medians = [median_ms(v) for v in t.requests.values()]
        return [*medians, median_ms(t.episode), statistics.median(t.throughput)]

    ours, base = cells(server), cells(floor)
    yield "| groundstate | " + " | ".join(f"{v:.2f} ms" for v in ours[:-1]) + f" | {ours[-1]:.0f} |"
    yield "| no-op floor | " + " | ".join(f"{v:.2f} ms" for v in base[:-1]) + f" | {base[-1]:.0f} |"
    yield "| ratio | " + " | ".join(f"{o / b:.2f}×" for o, b in zip(ours, base, strict=True)) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds over both servers")
    parser.add_argument("--tasks-per-domain", type=int, default=6)
    parser.add_argument("--episodes", type=int, default=160, help="episodes per round at concurrency 16")
    parser.add_argument("--workers", default="1,2,4", help="worker counts of the scale-out rows")
    parser.add_argument("--scale-episodes", type=int, default=96, help="episodes per scale-out run")
    parser.add_argument("--backends", default="sqlite,postgresql", help="backends of the scale-out rows")
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.port is not None:
        serve_floor(args.port)
        return
    work_dir = Path(".groundstate/bench-floor")
    work_dir.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    server, url = start_server(work_dir, store_name=f"store-{uuid.uuid4().hex[:6]}.db")
    floor = None
    try:
        episodes = gold_episodes(url, args.tasks_per_domain)
        canned = work_dir / "canned.json"
        record(url, episodes, canned)
        floor, floor_url = start_floor(canned, work_dir / "floor.log")
        timings = {"server": Timings(), "floor": Timings()}
        targets = {"server": url, "floor": floor_url}
        for n in range(args.rounds):
            order = ("server", "floor") if n % 2 == 0 else ("floor", "server")
            for name in order:
                sequential(targets[name], episodes, timings[name])
                eps = asyncio.run(concurrent(targets[name], episodes, args.episodes, CONCURRENCY))
                timings[name].throughput.append(eps)
    finally:
        stop(server)
        if floor is not None:
            stop(floor)
    load_after = os.getloadavg()
    scaled = []
    for backend in (b for b in args.backends.split(",") if b):
        for workers in (int(w) for w in args.workers.split(",") if w):
            scaled.append(
                (backend, workers, *scale_out(work_dir, episodes, args.scale_episodes, backend, workers))
            )
    print(
        f"{len(episodes)} test tasks ({', '.join(DOMAINS)}), gold calls cycled to {TOOL_CALLS} per episode; "
        f"{args.rounds} alternating rounds; medians; SQLite sandboxes, one worker"
    )
    print("\n".join(table(timings["server"], timings["floor"])))
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min; {os.cpu_count()} CPUs)"
    )
    if scaled:
        floor_eps = statistics.median(timings["floor"].throughput)
        print(f"\nscale-out: episodes/s with {CONCURRENCY} at once (two runs after a warm-up), × the floor's")
        print("| sandboxes + store | workers | episodes/s (runs) | × floor | × 1 worker | load at start |")
        print("|---|---|---|---|---|---|")
        one: dict[str, float] = {}
        for backend, workers, runs, load in scaled:
            eps = statistics.median(runs)
            one.setdefault(backend, eps)
            each = ", ".join(f"{r:.1f}" for r in runs)
            print(
                f"| {backend} | {workers} | {eps:.1f} ({each}) | {eps / floor_eps:.2f}× "
                f"| {eps / one[backend]:.2f}× | {load:.2f} |"
            )


if __name__ == "__main__":
    main()
