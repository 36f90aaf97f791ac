"""Generation throughput: wall time of `groundstate tasks generate` per domain, as users run it.

Runs the real command (a fresh process each time, so worker start-up and domain import are counted) into a
temporary directory, `--repeats` times per domain, and prints the median wall time, tasks per second and the
number of discarded draws. The issue's target is 1,000 validated tasks for one domain in under a minute.

    python benchmarks/generation.py [--n 1000] [--workers 2] [--repeats 3] [--domains hotel,retail,...]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOMAINS = ("hotel", "retail", "insurance", "travel")


def run_once(domain: str, n: int, workers: int, seed: int) -> tuple[float, int, int]:
    """One generation run: (wall seconds, tasks written, draws discarded)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "groundstate", "tasks", "generate", "--domain", domain, "--n", str(n)]
        cmd += ["--seed", str(seed), "--workers", str(workers), "--out", out]
        started = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{domain}: generation failed:\n{done.stdout}\n{done.stderr}")
        written = len(list(Path(out).glob("*.yaml")))
    found = re.search(r"(\d+) draws discarded", done.stdout)
    return elapsed, written, int(found.group(1)) if found else -1


def main() -> None:
    """Time each domain and print one row per domain."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--domains", default=",".join(DOMAINS))
    args = parser.parse_args()
    print(f"groundstate tasks generate --n {args.n} --workers {args.workers}, median of {args.repeats} runs")
    print(f"{'domain':<10} {'median s':>9} {'tasks/s':>8} {'written':>8} {'discarded':>10}  runs (s)")
    for domain in args.domains.split(","):
        runs = [run_once(domain, args.n, args.workers, args.seed + r) for r in range(args.repeats)]
        median = statistics.median(r[0] for r in runs)
        written, discarded = runs[0][1], runs[0][2]
        every = ", ".join(f"{r[0]:.1f}" for r in runs)
        print(f"{domain:<10} {median:>9.1f} {written / median:>8.1f} {written:>8} {discarded:>10}  {every}")


if __name__ == "__main__":
    main()
