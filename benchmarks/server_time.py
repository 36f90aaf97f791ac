"""The server's own work per episode, in process: create + 10 tool calls + score, for every read tool.

Issue #12's goal is about the median tool: ≤ 10 ms of server time for an episode of create, 10 calls and
score. For every read tool that a test task's gold trajectory calls (one example call each), this plays
such episodes on the episode service itself (no HTTP, no client), and splits each tool call into the tool
(its statements inside its sandbox session, timed by running the same call through `run_tool` on a copy)
and the rest of the service (the episode read, the sandbox check, validation, the store append).

    python benchmarks/server_time.py [--backends sqlite,postgresql] [--episodes 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env_server.app import build_service
from env_server.episodes.service import EpisodeService
from env_server.execution import episode_tools, run_tool
from env_server.sandbox import template_of
from env_server.settings import DEFAULT_PG_URL, Settings
from shared.models import StartEpisodeRequest, ToolCallRequest
from shared.tasks import GoldAction, Task

PG_URL = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
TOOL_CALLS = 10
DOMAINS = ("hotel", "retail", "travel", "insurance")


def read_examples(service: EpisodeService) -> dict[str, tuple[Task, GoldAction]]:
    """`domain.tool` -> the first test task whose gold trajectory calls that read tool, and the call."""
    examples: dict[str, tuple[Task, GoldAction]] = {}
    for name in DOMAINS:
        domain = service.registry.domain(name)
        for task in service.registry.tasks(domain=name):
            if task.split != "test" or task.kind != "action":
                continue
            for action in task.gold_actions:
                if domain.tools_by_name[action.name].kind == "read":
                    examples.setdefault(f"{name}.{action.name}", (task, action))
    return examples


def timed_episode(
    service: EpisodeService, task_id: str, tool: str, args: dict[str, Any]
) -> tuple[float, list[float], float, float]:
    """One episode of `tool` called `TOOL_CALLS` times: seconds to create, of each call, to score, in all."""
    t0 = time.perf_counter()
    eid = service.start(StartEpisodeRequest(task_id=task_id)).episode_id
    t1 = time.perf_counter()
    calls = []
    for _ in range(TOOL_CALLS):
        t = time.perf_counter()
        service.call_tool(eid, ToolCallRequest(name=tool, arguments=args))
        calls.append(time.perf_counter() - t)
    t2 = time.perf_counter()
    service.score(eid)
    t3 = time.perf_counter()
    return t1 - t0, calls, t3 - t2, t3 - t0


def episode_ms(service: EpisodeService, task: Task, action: GoldAction) -> tuple[float, float, float, float]:
    """One episode: (create, median tool call, score, whole episode), milliseconds."""
    create, calls, score, episode = timed_episode(service, task.id, action.name, action.arguments)
    return 1000 * create, 1000 * statistics.median(calls), 1000 * score, 1000 * episode


def tool_ms(service: EpisodeService, task: Task, action: GoldAction, repeats: int = 20) -> float:
    """The tool alone (`run_tool` in a sandbox of the task: its session and statements), median ms."""
    domain = service.registry.domain(task.domain)
    sandbox = service.sandboxes.create(uuid.uuid4().hex, template_of(task, domain))
    tools = episode_tools(task, domain)
    try:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            run_tool(sandbox, tools, action.name, action.arguments)
            times.append(time.perf_counter() - t)
        return 1000 * statistics.median(times)
    finally:
        sandbox.dispose()


@dataclass(frozen=True)
class Row:
    """One read tool's medians, milliseconds."""

    name: str
    create: float
    call: float
    tool: float
    score: float
    episode: float


def measure(backend: str, episodes: int) -> None:
    """Print one backend's per-tool figures and their medians."""
    store = f"sqlite:///{tempfile.mkdtemp()}/store.db"
    sandbox_url = "sqlite://" if backend == "sqlite" else PG_URL
    service = build_service(Settings(store_url=store, sandbox_url=sandbox_url))
    rows: list[Row] = []
    try:
        for name, (task, action) in read_examples(service).items():
            episode_ms(service, task, action)  # warm: templates, statement caches
            played = [episode_ms(service, task, action) for _ in range(episodes)]
            create, call, score, episode = (statistics.median(p[i] for p in played) for i in range(4))
            rows.append(Row(name, create, call, tool_ms(service, task, action), score, episode))
    finally:
        service.sandboxes.close()
        service.store.engine.dispose()
    rows.sort(key=lambda r: r.episode)
    print(f"\n{backend}: {len(rows)} read tools, {episodes} episodes each (medians, ms)")
    print("| tool | create | tool call | of which the tool | score | episode |\n|---|---|---|---|---|---|")
    for r in rows:
        cells = f"{r.create:.2f} | {r.call:.2f} | {r.tool:.2f} | {r.score:.2f} | {r.episode:.1f}"
        print(f"| {r.name} | {cells} |")
    med = {f: statistics.median(getattr(r, f) for r in rows) for f in ("create", "call", "tool", "score")}
    cells = " | ".join(f"{m:.2f}" for m in med.values())
    print(f"| **median over tools** | {cells} | {statistics.median(r.episode for r in rows):.1f} |")
    middle = rows[len(rows) // 2]
    print(f"the median tool's episode: {middle.name}, {middle.episode:.1f} ms (goal ≤ 10 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per tool (after one to warm up)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    for backend in args.backends.split(","):
        measure(backend, args.episodes)


if __name__ == "__main__":
    main()
