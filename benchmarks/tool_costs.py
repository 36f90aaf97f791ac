"""What each read tool costs inside its sandbox (SQLite, in process): the domain's share of a tool call.

For every read tool that some action task's gold trajectory calls, runs that call `--repeats` times on a
fresh sandbox of the task and prints the median, slowest first, and the median over all read tools.

    python benchmarks/tool_costs.py [--repeats 50] [--top 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env_server.domain.registry import DomainRegistry
from env_server.execution import episode_tools, run_tool
from env_server.sandbox import make_sandbox_engine, template_of
from shared.tasks import GoldAction, Task


def main() -> None:
    """Time every read tool once per domain and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    registry = DomainRegistry.discover()
    engine = make_sandbox_engine("sqlite://")
    rows: list[tuple[float, str]] = []
    for domain in registry.domains:
        examples: dict[str, tuple[Task, GoldAction]] = {}
        for task in registry.tasks(domain=domain.name):
            for action in task.gold_actions if task.kind == "action" else []:
                if domain.tools_by_name[action.name].kind == "read":
                    examples.setdefault(action.name, (task, action))
        for name, (task, action) in examples.items():
            sandbox = engine.create(uuid.uuid4().hex, template_of(task, domain))
            tools = episode_tools(task, domain)
            times = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                run_tool(sandbox, tools, action.name, action.arguments)
                times.append(time.perf_counter() - started)
            rows.append((1000 * statistics.median(times), f"{domain.name}.{name}"))
            sandbox.dispose()
    rows.sort(reverse=True)
    print(f"{'p50 ms':>7}  read tool (SQLite, in process, {args.repeats} runs each)")
    for ms, name in rows[: args.top]:
        print(f"{ms:>7.2f}  {name}")
    print(f"median over {len(rows)} read tools: {statistics.median(r[0] for r in rows):.2f} ms")
    engine.close()


if __name__ == "__main__":
    main()
