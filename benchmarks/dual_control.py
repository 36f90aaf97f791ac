"""What dual control costs the server: telecom episodes where the customer acts, beside those where only the
agent does.

For every telecom task, plays its reference conversation on the episode service in process (no HTTP, no
client): start, the agent's calls and messages, the scripted customer's replies (which, on an acting line,
run the customer's own tool calls in the same sandbox) and the score. It reports the median server time per
episode and per customer message, for tasks with customer-side actions and for those without, and checks that
every episode scores 1 (a benchmark of a broken episode measures nothing).

    python benchmarks/dual_control.py [--backend sqlite|postgresql] [--repeats 5]
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
from env_server.episodes.service import EpisodeService
from env_server.settings import DEFAULT_PG_URL, Settings
from env_server.validation.reference import reference_trajectory
from shared.models import MessageRequest, StartEpisodeRequest, ToolCallRequest
from shared.tasks import Task

PG_URL = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
DOMAIN = "telecom"


def dual(task: Task) -> bool:
    """Whether the task needs the customer to act on their side."""
    return any(a.actor == "user" for a in task.gold_actions)


def play(service: EpisodeService, task: Task) -> tuple[float, list[float]]:
    """One reference episode: its total server seconds and each customer message's seconds."""
    steps = reference_trajectory(task, service.registry.domain(task.domain), service.scorer).steps
    began = time.perf_counter()
    episode = service.start(StartEpisodeRequest(task_id=task.id)).episode_id
    messages: list[float] = []
    for step in (s for s in steps if s.role == "assistant"):
        if step.tool_call is not None:
            call = ToolCallRequest(name=step.tool_call.name, arguments=step.tool_call.arguments)
            service.call_tool(episode, call)
        else:
            sent = time.perf_counter()
            service.message(episode, MessageRequest(content=step.content or ""))
            messages.append(time.perf_counter() - sent)
    reward = service.score(episode).reward
    total = time.perf_counter() - began
    service.dispose(episode)
    if reward != 1:
        raise SystemExit(f"{task.id}: its reference episode scored {reward}, not 1")
    return total, messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--repeats", type=int, default=5, help="Episodes per task.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sandbox_url = "sqlite://" if args.backend == "sqlite" else PG_URL
        settings = Settings(store_url=f"sqlite:///{tmp}/store.db", sandbox_url=sandbox_url, domains=[DOMAIN])
        service = build_service(settings)
        tasks = [t for t in service.registry.tasks(domain=DOMAIN) if t.kind == "action"]
        for task in tasks:  # builds the template and warms every code path once
            play(service, task)
        rows: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
        for _ in range(args.repeats):
            for task in tasks:
                total, messages = play(service, task)
                rows[dual(task)][0].append(total)
                rows[dual(task)][1].extend(messages)
    print(f"telecom reference episodes on {args.backend}, {args.repeats} per task, in process")
    print("| episodes | tasks | median ms per episode | median ms per customer message |")
    print("|---|---|---|---|")
    for is_dual, label in ((True, "the customer acts (dual control)"), (False, "only the agent acts")):
        episodes, messages = rows[is_dual]
        count = sum(dual(t) == is_dual for t in tasks)
        print(
            f"| {label} | {count} | {statistics.median(episodes) * 1000:.1f} "
            f"| {statistics.median(messages) * 1000:.2f} |"
        )


if __name__ == "__main__":
    main()
