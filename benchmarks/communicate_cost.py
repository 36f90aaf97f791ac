"""The scoring cost of the `communicate` check per episode, on every shipped task that asks for a fact.

Each task's canonical policy-following conversation (the one `tasks validate` plays, told with the task's
reference reply) is read the way `Scorer.score` reads it: one `Conversation`, then `told` for every item.
Prints the median and 90th percentile per episode in microseconds. Run it against another checkout to
compare rules (`PYTHONPATH=/path/to/other/checkout python benchmarks/communicate_cost.py`).

    python benchmarks/communicate_cost.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import time

from env_server.domain.registry import DomainRegistry
from env_server.scoring.communicate import Conversation
from env_server.scoring.trajectory import Message
from env_server.scoring.vocabulary import vocabulary
from env_server.validation._flow import honest_script


def main() -> None:
    """Time the check on every task with `communicate` items and print the per-episode figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="Timed runs per episode (the median counts).")
    args = parser.parse_args()
    registry = DomainRegistry.discover()
    takes_items = "items" in inspect.signature(Conversation).parameters
    costs = []
    for task in registry.tasks():
        if not task.communicate or task.reference_reply is None or task.kind == "analytics":
            continue
        domain = registry.domain(task.domain)
        ref = task.reference_reply
        talk = honest_script(task, domain, task.gold_actions, ref.text, ref.after_writes)
        messages = [line for line in talk.lines if isinstance(line, Message)]
        vocab = vocabulary(domain)
        runs = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            if takes_items:
                heard = Conversation(messages, vocab, domain.policy, task.communicate)
            else:
                heard = Conversation(messages, vocab, domain.policy)
            for item in task.communicate:
                heard.told(item)
            runs.append(time.perf_counter() - start)
        costs.append(statistics.median(runs) * 1e6)
    costs.sort()
    p90 = costs[int(len(costs) * 0.9)]
    print(f"{len(costs)} episodes: median {statistics.median(costs):.0f} µs, p90 {p90:.0f} µs per episode")


if __name__ == "__main__":
    main()
