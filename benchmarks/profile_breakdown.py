"""Where the server's CPU time goes under load: py-spy on `groundstate serve`, samples sorted into parts.

Runs `groundstate serve` (SQLite sandboxes, one worker) under `py-spy record --gil` (only the thread holding
the GIL is sampled: Python CPU time, not waiting), drives it with the gold-replay episodes of
`benchmarks/floor.py`, 16 at once, and sorts every sample into the part of a request it belongs to (the
first rule whose frame is on the sample's stack). py-spy is not a dependency: `pip install --target DIR
py-spy` and pass `--py-spy DIR/bin/py-spy`. `--stacks FILE` only sorts an earlier recording.

    python benchmarks/profile_breakdown.py [--py-spy PATH] [--episodes 400] [--stacks FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import start_process
from benchmarks.floor import concurrent, gold_episodes

#: Not requests' work: left out of the shares.
EXCLUDED = ("idle thread-pool worker", "server start-up", "warm-up: domain seed build")
#: (part, a frame on the stack): the first match wins, so the more specific rules come first.
RULES = (
    ("warm-up: domain seed build", "SQLiteSandboxEngine._base"),
    ("thread-pool hop (worker side)", "WorkerThread.run (anyio/_backends/_asyncio.py:1133)"),
    ("thread-pool hop (worker side)", "Queue.task_done"),
    ("idle thread-pool worker", "Queue.get (queue.py"),
    ("server start-up", "_find_and_load"),
    ("sandbox creation (template image copy)", "SQLiteSandboxEngine.create"),
    ("store: append the event", "Store.append_event"),
    ("store: create the episode", "Store.create_episode"),
    ("store: save the score", "Store.save_score"),
    ("store: read the episode row", "Store.episode "),
    ("store: read events and saved score", "Store.events"),
    ("store: read events and saved score", "Store.score "),
    ("scoring: changed rows and diff", "Scorer."),
    ("the tools' own ORM queries", "Tool.invoke"),
    ("sandbox session set-up, flush, rollback", "run_tool"),
    ("argument validation, tool schemas", "Tool.validate"),
    ("argument validation, tool schemas", "openai_schema"),
    ("result model_dump for the event", "model_dump"),
    ("episode service, rest", "EpisodeService."),
    ("response encoding", "serialize_response"),
    ("response encoding", "jsonable_encoder"),
    ("request parsing and validation", "request_body_to_args"),
    ("request parsing and validation", "Request.json"),
    ("request parsing and validation", "Request.body"),
    ("FastAPI dependencies", "solve_dependencies"),
    ("thread-pool hop (event loop side)", "run_sync"),
    ("thread-pool hop (event loop side)", "run_in_threadpool"),
    ("uvicorn, routing, our middlewares", "uvicorn"),
    ("uvicorn, routing, our middlewares", "starlette"),
    ("uvicorn, routing, our middlewares", "fastapi"),
)


def shares(stacks: Path) -> list[tuple[str, float]]:
    """Each part's share of the samples that are requests' work, largest first."""
    counts: collections.Counter[str] = collections.Counter()
    for line in stacks.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        part = next((name for name, frame in RULES if frame in stack), "other")
        counts[part] += int(n)
    busy = sum(n for part, n in counts.items() if part not in EXCLUDED)
    return [(part, n / busy) for part, n in counts.most_common() if part not in EXCLUDED]


def record(py_spy: str, stacks: Path, episodes: int) -> None:
    """Profile a server from its start while `episodes` gold-replay episodes run, 16 at once.

    py-spy starts the server; start-up and seed builds are sorted out by `RULES`. On a heavily loaded
    machine the GIL-holder samples become implausible (docs/performance/history.md): check the hottest
    lines.
    """
    work_dir = Path(".groundstate/bench-profile")
    work_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GROUNDSTATE_SANDBOX_URL": "sqlite://",
        "GROUNDSTATE_STORE_URL": f"sqlite:///{work_dir.resolve()}/store-{uuid.uuid4().hex[:6]}.db",
    }
    spy = [py_spy, "record", "--gil", "-f", "raw", "-r", "500", "-o", str(stacks), "--"]
    proc, url = start_process([*spy, sys.executable, "-m", "groundstate", "serve"], env, work_dir / "spy.log")
    try:
        plays = gold_episodes(url, 6)
        asyncio.run(concurrent(url, plays, 48, 16))  # warm-up: templates and caches
        eps = asyncio.run(concurrent(url, plays, episodes, 16))
        print(f"{eps:.1f} episodes/s under the profiler; load average {os.getloadavg()[0]:.2f}")
    finally:
        proc.send_signal(signal.SIGINT)  # py-spy writes its file and stops the server
        proc.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy")
    parser.add_argument("--episodes", type=int, default=400)
    parser.add_argument("--stacks", type=Path, help="sort this recording instead of making one")
    args = parser.parse_args()
    stacks = args.stacks
    if stacks is None:
        stacks = Path(".groundstate/bench-profile/stacks.txt").resolve()
        record(args.py_spy, stacks, args.episodes)
    print("| part | share of server CPU |\n|---|---|")
    for part, share in shares(stacks):
        print(f"| {part} | {100 * share:.1f}% |")


if __name__ == "__main__":
    main()
