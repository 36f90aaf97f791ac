"""The training shape: a wave of 144 episodes at once, 20 tool calls each from gold trajectories, then score.

A GRPO step starts a group of episodes together and waits for the last one, so the wave's wall time is what
a trainer waits for. Episodes cycle over the hotel, retail, travel and insurance test tasks; each plays its
task's gold calls, padded to 20 with the task's own read calls, then scores. Driven by our async client
(`AsyncGroundstateClient`, one connection per episode) against `groundstate serve` on SQLite with 1, 2 and 4
workers, and against the no-op floor of `benchmarks/floor.py` (the same routes and models answering the
bodies recorded from the server) in the same run. The floor and the first server are also driven by the
other clients of `--clients`, to show how much of the wave is the client's: `httpx` is
`AsyncGroundstateClient` on httpx's own transport (its default before it moved to aiohttp's), `aiohttp` a
bare aiohttp session parsing the same models.
Each episode's score is compared with the same calls played alone beforehand: a worker count that changes a
score is reported, not averaged away.

    python benchmarks/wave.py [--episodes 144] [--calls 20] [--workers 1,2,4] [--waves 2]
                              [--clients ours,httpx,aiohttp] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import serving, stop
from benchmarks.floor import Episode, record, start_floor
from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.errors import ApiError, TransportError
from shared.models import EpisodeStarted, ScoreResult, ToolCallResult
from shared.tasks import Task

DOMAINS = ("hotel", "retail", "travel", "insurance")
#: The clients a wave can be driven by, and their labels in the table.
CLIENTS = {
    "ours": "",
    "httpx": "`AsyncGroundstateClient` on httpx's transport",
    "aiohttp": "bare aiohttp",
}

Calls = list[tuple[str, dict[str, Any]]]


def wave_tasks(url: str, calls: int) -> dict[str, Calls]:
    """Every test task with gold calls: its gold calls, then its read calls cycled, `calls` in all."""
    plans: dict[str, Calls] = {}
    with GroundstateClient(url) as client:
        for domain in DOMAINS:
            kinds = client.domain(domain).tool_kinds
            for public in client.tasks(domain=domain, split="test"):
                task = client.task(public.id, include_gold=True)
                assert isinstance(task, Task)
                gold = [(a.name, a.arguments) for a in task.gold_actions]
                reads = [c for c in gold if kinds.get(c[0]) == "read"] or gold
                if gold:
                    plans[task.id] = (gold + list(itertools.islice(itertools.cycle(reads), calls)))[:calls]
    return plans


def verdict(score: ScoreResult) -> tuple[Any, ...]:
    """What must not depend on the worker count: status, reward and the diff."""
    return (score.status, score.reward, [d.model_dump_json() for d in score.diff])


class EpisodeClient(Protocol):
    """The three calls a wave makes; `AsyncGroundstateClient` has them, and so has `AiohttpEpisodes`."""

    async def start_episode(self, task_id: str) -> EpisodeStarted: ...

    async def call_tool(self, episode_id: str, name: str, arguments: dict[str, Any]) -> ToolCallResult: ...

    async def score(self, episode_id: str) -> ScoreResult: ...


class AiohttpEpisodes:
    """The same three calls on aiohttp, parsed into the same models: measures what the client costs."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self._http = session

    async def _post(self, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            async with self._http.post(path, json=body) as response:
                if response.status >= 400:
                    raise ApiError(response.status, "http-error", (await response.text())[:500])
                return await response.json()
        except aiohttp.ClientError as exc:
            raise TransportError(f"POST {path}: {exc!r}") from exc

    async def start_episode(self, task_id: str) -> EpisodeStarted:
        """Start an episode."""
        return EpisodeStarted.model_validate(await self._post("/v1/episodes", {"task_id": task_id}))

    async def call_tool(self, episode_id: str, name: str, arguments: dict[str, Any]) -> ToolCallResult:
        """Run a tool."""
        body = {"name": name, "arguments": arguments}
        return ToolCallResult.model_validate(await self._post(f"/v1/episodes/{episode_id}/tool_calls", body))

    async def score(self, episode_id: str) -> ScoreResult:
        """Score the episode."""
        return ScoreResult.model_validate(await self._post(f"/v1/episodes/{episode_id}/score"))


async def play(client: EpisodeClient, task_id: str, calls: Calls) -> tuple[Any, ...]:
    """One episode: start, every call, score; a failure comes back as the verdict ("failed", ...)."""
    try:
        eid = (await client.start_episode(task_id)).episode_id
        for name, args in calls:
            await client.call_tool(eid, name, args)
        return verdict(await client.score(eid))
    except (ApiError, TransportError) as exc:
        return ("failed", type(exc).__name__, str(exc)[:200])


async def wave(
    url: str, plans: dict[str, Calls], episodes: int, client: str = "ours"
) -> tuple[float, list[tuple[str, tuple[Any, ...]]]]:
    """`episodes` episodes at once; returns the wall time and each episode's (task, verdict)."""
    work = list(itertools.islice(itertools.cycle(plans), episodes))
    async with AsyncExitStack() as stack:
        episode_client: EpisodeClient
        if client == "aiohttp":
            session = aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=episodes))
            episode_client = AiohttpEpisodes(await stack.enter_async_context(session))
        else:
            limits = httpx.Limits(max_connections=episodes, max_keepalive_connections=episodes)
            transport = httpx.AsyncHTTPTransport(limits=limits) if client == "httpx" else None
            episode_client = await stack.enter_async_context(
                AsyncGroundstateClient(url, max_connections=episodes, transport=transport)
            )
        start = time.perf_counter()
        verdicts = await asyncio.gather(*(play(episode_client, t, plans[t]) for t in work))
        elapsed = time.perf_counter() - start
    return elapsed, list(zip(work, verdicts, strict=True))


def run_waves(
    url: str, plans: dict[str, Calls], episodes: int, waves: int, client: str = "ours"
) -> tuple[list[float], list[Any]]:
    """`waves` waves one after the other; returns each wall time and every episode's (task, verdict)."""
    walls, verdicts = [], []
    for _ in range(waves):
        wall, played = asyncio.run(wave(url, plans, episodes, client))
        walls.append(wall)
        verdicts += played
    return walls, verdicts


def row(label: str, walls: list[float], episodes: int, calls: int, floor_wall: float | None) -> str:
    """One table row: the wave's wall time (the first wave warms up), its throughput and its ratio."""
    best = walls[-1] if len(walls) == 1 else statistics.median(walls[1:])
    ratio = f"{best / floor_wall:.1f}×" if floor_wall else "1×"
    each = ", ".join(f"{w:.2f}" for w in walls)
    return f"| {label} | {best:.2f} ({each}) | {ratio} | {episodes * (calls + 2) / best:.0f} |"


def labelled(server: str, client: str) -> str:
    """A table row's label: the server, then the client when it is not ours."""
    return f"{server}, {CLIENTS[client]}" if CLIENTS[client] else server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=144)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--waves", type=int, default=2, help="waves per server (the first warms up)")
    parser.add_argument(
        "--clients",
        default="ours",
        help="clients to drive the floor and the first server with (ours = AsyncGroundstateClient as is)",
    )
    parser.add_argument(
        "--backend",
        default="sqlite",
        choices=["sqlite", "postgresql"],
        help="sandboxes and store: SQLite, or PostgreSQL (new databases, any worker serves any request)",
    )
    args = parser.parse_args()
    clients = [c for c in args.clients.split(",") if c]
    if unknown := set(clients) - set(CLIENTS):
        parser.error(f"unknown clients {sorted(unknown)}; choose from {sorted(CLIENTS)}")
    if "ours" in clients:  # the ratios are against the floor driven by our client
        clients.remove("ours")
    clients.insert(0, "ours")
    work_dir = Path(".groundstate/bench-wave")
    plans: dict[str, Calls] = {}
    reference: dict[str, tuple[Any, ...]] = {}
    floor_wall: float | None = None
    print(
        f"wave = {args.episodes} episodes at once, {args.calls} tool calls each, then score; {args.backend}"
        " sandboxes and store; × floor is against the floor driven by `AsyncGroundstateClient`"
    )
    print(
        "| server, client | wave wall time s (each wave) | × floor | requests/s | verdicts differing"
        " | failed |"
    )
    print("|---|---|---|---|---|---|")
    for n, workers in enumerate(int(w) for w in args.workers.split(",")):
        load = os.getloadavg()[0]
        rows = []
        with serving(work_dir, args.backend, workers) as url:
            if not plans:  # first: record each task's calls played alone, and measure the floor with them
                plans = wave_tasks(url, args.calls)
                canned = record(url, [Episode(t, c) for t, c in plans.items()], work_dir / "canned.json")
                reference = {t: verdict(ScoreResult.model_validate(c["score"])) for t, c in canned.items()}
                floor, floor_url = start_floor(work_dir / "canned.json", work_dir / "floor.log")
                try:
                    for client in clients:
                        walls, _ = run_waves(floor_url, plans, args.episodes, args.waves, client)
                        if floor_wall is None:
                            floor_wall = walls[-1] if len(walls) == 1 else statistics.median(walls[1:])
                            ratio_to = None
                        else:
                            ratio_to = floor_wall
                        label = labelled("no-op floor", client)
                        print(row(label, walls, args.episodes, args.calls, ratio_to) + "  |  |")
                finally:
                    stop(floor)
            for client in clients if n == 0 else clients[:1]:
                walls, verdicts = run_waves(url, plans, args.episodes, args.waves, client)
                rows.append((client, walls, verdicts))
        for client, walls, verdicts in rows:
            failed = sum(v[0] == "failed" for _, v in verdicts)
            differ = sum(v != reference[t] and v[0] != "failed" for t, v in verdicts)
            label = labelled(f"groundstate, {workers} worker{'s' * (workers > 1)}", client)
            print(
                row(label, walls, args.episodes, args.calls, floor_wall) + f" {differ} | {failed} |", end=""
            )
            print(f"  (load average {load:.2f} at its start)")
    print(f"{len(plans)} test tasks; verdicts compared with each task's calls played alone on one worker")


if __name__ == "__main__":
    main()
