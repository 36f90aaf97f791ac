"""Where a training step's time goes: generation, tools, user, scoring, episode starts, and the update.

Runs the real `groundstate train local` for a few steps against a real server (started here, serving only
the pool's domain) and summarises its `train_log.jsonl`; or, with `--log`, summarises an existing run.

    python benchmarks/train_step.py --pool POOL.json [--steps 2] [--tasks-per-step 2] [--episodes-per-task 4]
    python benchmarks/train_step.py --log runs/train/train_log.jsonl
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import start_server
from trainer.selection import Pool
from trainer.train_local import LOG_FILE, StepLog

PARTS = ("generation_s", "tools_s", "user_s", "scoring_s", "start_s")


def summarise(lines: list[StepLog]) -> str:
    """A table of mean seconds per step by part, with each part's share of the step."""
    n = len(lines)
    step = sum(x.times.step_s for x in lines) / n
    rows = [(part.removesuffix("_s"), sum(getattr(x.times, part) for x in lines) / n) for part in PARTS]
    rows.append(("update (logprobs, loss, backward, AdamW)", sum(x.times.update_s for x in lines) / n))
    accounted = sum(seconds for _, seconds in rows)
    rows.append(("other (bookkeeping, waits)", max(0.0, step - accounted)))
    episodes = sum(x.episodes for x in lines) / n
    out = [f"{n} steps, {step:.1f} s per step on average; {episodes:.1f} episodes per step"]
    out.append(f"{'part':<42} {'s/step':>8} {'share':>7}")
    out += [f"{name:<42} {seconds:>8.2f} {seconds / step:>7.1%}" for name, seconds in rows]
    tokens = sum(x.trained_tokens for x in lines) / n
    env_tokens = sum(x.env_tokens for x in lines) / n
    out.append(f"trained tokens/step {tokens:.0f}, masked environment tokens/step {env_tokens:.0f}")
    return "\n".join(out)


def read_log(path: Path) -> list[StepLog]:
    return [StepLog.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="Summarise this train_log.jsonl instead of running steps.")
    parser.add_argument("--pool", type=Path)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--episodes-per-task", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.log:
        print(summarise(read_log(args.log)))
        return
    if args.pool is None:
        parser.error("give --pool (or --log)")
    domains = sorted({t.domain for t in Pool.read(args.pool).tasks})
    out = args.out or Path(tempfile.mkdtemp(prefix="train-step-"))
    proc, url = start_server(out / "server", domains)
    try:
        command = [sys.executable, "-m", "groundstate", "train", "local", "--pool", str(args.pool)]
        command += ["--steps", str(args.steps), "--out", str(out / "train"), "--server", url, "--quiet"]
        command += [
            "--tasks-per-step",
            str(args.tasks_per_step),
            "--episodes-per-task",
            str(args.episodes_per_task),
        ]
        command += ["--max-new-tokens", str(args.max_new_tokens), "--max-turns", str(args.max_turns)]
        command += ["--micro-batch", str(args.episodes_per_task), "--replacements", "0"]
        if args.threads:
            command += ["--threads", str(args.threads)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(summarise(read_log(out / "train" / LOG_FILE)))


if __name__ == "__main__":
    main()
