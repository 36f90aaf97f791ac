"""Many live episodes: does starting one get slower, and what does each cost in memory, as they pile up?

Starts `--episodes` episodes on the episode service in process (no HTTP) without finishing any, one tool call
each, and prints the p50 start time per block of 250 episodes and the process's resident memory. The design
(docs/design/sandboxes.md): creating a sandbox must not get more expensive as live episodes grow; an early
goal: ≥ 2,000 live episodes.

    python benchmarks/live_episodes.py [--episodes 2000] [--backend sqlite|postgresql] [--task ID]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env_server.app import build_service
from env_server.settings import DEFAULT_PG_URL, Settings
from shared.models import StartEpisodeRequest, ToolCallRequest

PG_URL = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
BLOCK = 250  # episodes per printed row


def rss_mb() -> float:
    """Resident memory of this process, in MiB."""
    pages = int(Path(f"/proc/{os.getpid()}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    """Start episodes in blocks and print one row per block."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--task", default="hotel-corp-modify-approval-001")
    args = parser.parse_args()
    url = "sqlite://" if args.backend == "sqlite" else PG_URL
    store = f"sqlite:///{tempfile.mkdtemp()}/store.db"
    service = build_service(Settings(store_url=store, sandbox_url=url, max_live_sandboxes=args.episodes))
    task = service.registry.task(args.task)
    kinds = {t.name: t.kind for t in service.registry.domain(task.domain).tools}
    read = next(a for a in task.gold_actions if kinds[a.name] == "read")
    call = ToolCallRequest(name=read.name, arguments=read.arguments)
    episodes = [service.start(StartEpisodeRequest(task_id=args.task)).episode_id]  # builds the template
    base = rss_mb()
    print(f"{args.episodes} live episodes of {args.task} on {args.backend}, one {read.name} call each")
    print(f"{'live':>6} {'start p50 ms':>13} {'call p50 ms':>12} {'RSS MiB':>9} {'MiB/episode':>12}")
    starts: list[float] = []
    calls: list[float] = []
    while len(episodes) < args.episodes:
        t = time.perf_counter()
        eid = service.start(StartEpisodeRequest(task_id=args.task)).episode_id
        starts.append(time.perf_counter() - t)
        t = time.perf_counter()
        service.call_tool(eid, call)
        calls.append(time.perf_counter() - t)
        episodes.append(eid)
        if len(episodes) % BLOCK == 0:
            mem = rss_mb()
            per = (mem - base) / (len(episodes) - 1)
            s50, c50 = 1000 * statistics.median(starts), 1000 * statistics.median(calls)
            print(f"{len(episodes):>6} {s50:>13.2f} {c50:>12.2f} {mem:>9.0f} {per:>12.2f}")
            starts.clear()
            calls.clear()
    for eid in episodes:  # give PostgreSQL slots back
        service.dispose(eid)
    service.sandboxes.close()


if __name__ == "__main__":
    main()
