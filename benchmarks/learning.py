"""Proof that `groundstate train local` learns: held-out pass@1 before and after GRPO on the starter tasks.

Every stage is the real command line against a real server (started here, serving the starter domain):

0. warm    `groundstate train warm-start` (`--warm-epochs`, 0 to skip): a few supervised steps on the gold
           first call of every train task, because the base model never writes a valid call and GRPO needs
           successes; the warm-started model is the start of training and the "before" of the proof;
1. probe   `groundstate probe` the start model on the train split (`--probe-trials` per task);
2. select  `groundstate select` the tasks it sometimes solves (`--keep`, default hard,medium,easy);
3. before  `groundstate eval` the start model on the held-out test split (`--eval-trials` per task);
4. train   `groundstate train local` on the pool for `--steps` steps, a checkpoint every `--eval-every`;
5. after   `groundstate eval` every saved checkpoint and the final model on the same test split;
6. report  `learning.json` (pass@1 with 95% intervals per evaluated step, the training log, wall times) and
           `learning.png` (training reward per step, held-out pass@1 with its interval per evaluated step).

Each stage skips what its outputs already hold (evaluations resume trial by trial), so a killed run resumes
with the same command. Runs for an hour or more on a 2-core CPU: start it with `nohup ... &`.

    python benchmarks/learning.py --out runs/learning     # docs/training/learning.md's run: about an hour
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import start_server
from shared.client import GroundstateClient
from trainer.metrics import compute_metrics
from trainer.results import read_results
from trainer.selection import Pool
from trainer.train_local import LOG_FILE, StepLog

DOMAIN = "starter"


def groundstate(*args: str) -> None:
    """Run one `groundstate` command (output to this process's stdout), failing loudly."""
    print("$ groundstate " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "groundstate", *args], check=True)


def policy(model: str, args: argparse.Namespace) -> str:
    return (
        f"local:{model}?temperature={args.temperature}&max_new_tokens={args.max_new_tokens}"
        f"&threads={args.threads}"
    )


def task_ids(url: str, split: str, tags: str) -> str:
    """The starter tasks of `split` carrying one of the comma-separated difficulty `tags` (all if empty)."""
    wanted = {t for t in tags.split(",") if t}
    with GroundstateClient(url) as client:
        tasks = client.tasks(domain=DOMAIN, split=split)
    return ",".join(t.id for t in tasks if not wanted or wanted & set(t.difficulty_tags))


def campaign(
    kind: str, model: str, split: str, trials: int, out: Path, url: str, args: argparse.Namespace
) -> None:
    groundstate(
        kind, "--policy", policy(model, args), "--server", url, "--tasks", task_ids(url, split, args.tags),
        "--trials", str(trials), "--max-turns", str(args.max_turns), "--concurrency", "1", "--out", str(out),
        "--quiet",
    )  # fmt: skip


def held_out(run: Path) -> dict[str, Any]:
    metrics = compute_metrics(read_results(run))
    ci = metrics.pass_at_1_ci95
    return {
        "pass_at_1": metrics.pass_at_1,
        "ci95": [ci.low, ci.high] if ci else None,
        "tasks": metrics.tasks,
        "trials": metrics.trials,
        "backend_errors": metrics.backend_errors,
    }


def warm(out: Path, url: str, args: argparse.Namespace) -> None:
    if (out / "config.json").is_file():
        return
    groundstate(
        "train", "warm-start", *(x for t in args.warm_tasks.split(",") for x in ("--task", t)),
        "--out", str(out), "--server", url,
        "--epochs", str(args.warm_epochs), "--lr", str(args.warm_lr), "--threads", str(args.threads),
        "--seed", str(args.seed), "--quiet",
    )  # fmt: skip


def train(start: str, pool: Path, out: Path, url: str, args: argparse.Namespace) -> None:
    if (out / "final" / "config.json").is_file():
        return
    groundstate(
        "train", "local", "--pool", str(pool), "--model", start, "--steps", str(args.steps),
        "--out", str(out), "--server", url,
        "--tasks-per-step", str(args.tasks_per_step), "--episodes-per-task", str(args.episodes_per_task),
        "--lr", str(args.lr), "--temperature", str(args.temperature),
        "--max-new-tokens", str(args.max_new_tokens), "--max-turns", str(args.max_turns),
        "--micro-batch", str(args.micro_batch), "--save-every", str(args.eval_every),
        "--threads", str(args.threads), "--seed", str(args.seed), "--quiet",
    )  # fmt: skip


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    steps = [line["step"] for line in report["train_log"]]
    rewards = [line["reward_mean"] for line in report["train_log"]]
    if steps:
        ax.plot(
            steps, rewards, color="#9db4d8", marker=".", lw=1, label="training reward (train tasks, per step)"
        )
    points = report["held_out"]
    xs = [p["step"] for p in points]
    ys = [p["pass_at_1"] for p in points]
    low = [p["pass_at_1"] - p["ci95"][0] for p in points]
    high = [p["ci95"][1] - p["pass_at_1"] for p in points]
    ax.errorbar(xs, ys, yerr=[low, high], color="#c0392b", marker="o", capsize=4, lw=2,
                label="held-out pass@1 (test tasks) with 95% interval")  # fmt: skip
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, max(0.1, *(p["ci95"][1] for p in points), *(r or 0 for r in rewards)) * 1.15)
    title = f"GRPO (TRL) on the starter curriculum\n{report['model']}, {report['cpu_note']}"
    ax.set_title(title, fontsize=10)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def stop_early(out: Path, args: argparse.Namespace, pool: Pool, times: dict[str, float]) -> None:
    """Write what bounds the run when the base model solves too few train tasks to form a step, and exit."""
    probe = held_out(out / "probe")
    report = {
        "model": "SmolLM2-135M-Instruct",
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "pool": {"tasks": len(pool.tasks), "histogram": pool.histogram},
        "probe_train": probe,
        "learned": False,
        "stopped": f"{len(pool.tasks)} train tasks in bands {args.keep}, fewer than a step's "
        f"{args.tasks_per_step}: without successes no group has reward variance, so GRPO has no gradient",
        "wall_s": times,
    }
    (out / "learning.json").write_text(json.dumps(report, indent=2) + "\n")
    sys.exit(
        f"stopped: {report['stopped']}; base pass@1 on train tasks {probe['pass_at_1']} (95% {probe['ci95']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/learning"))
    parser.add_argument("--server", help="Use this server instead of starting one (it must serve starter).")
    parser.add_argument(
        "--warm-epochs", type=int, default=1, help="Warm-start passes (0: start from the base)."
    )
    parser.add_argument("--warm-lr", type=float, default=3e-5)
    parser.add_argument(
        "--warm-tasks",
        default="starter-renew-101,starter-return-101",
        help="Train tasks whose gold first call the warm start learns (two: the model then succeeds "
        "sometimes, not always, so GRPO has groups with both outcomes).",
    )
    parser.add_argument(
        "--tags",
        default="renew,return",
        help="Play only tasks with one of these difficulty tags (empty: all); default: one-request tasks.",
    )
    # the defaults are the run in docs/training/learning.md (about an hour on this 2-core CPU)
    parser.add_argument("--probe-trials", type=int, default=2)
    parser.add_argument("--eval-trials", type=int, default=3)
    parser.add_argument("--keep", default="too_hard,hard,medium,easy")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--eval-every", type=int, default=3, help="Checkpoint and evaluate every N steps.")
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--episodes-per-task", type=int, default=4)
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (1: spinning threads on busy cores stall)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = (
        json.loads((out / "times.json").read_text()) if (out / "times.json").is_file() else {}
    )

    def stage(name: str, fn: Any, *fn_args: Any) -> None:
        started = time.monotonic()
        fn(*fn_args)
        times[name] = round(times.get(name, 0.0) + time.monotonic() - started, 1)
        (out / "times.json").write_text(json.dumps(times, indent=2) + "\n")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `kill` still stops the server started here
    proc = None
    url = args.server
    if url is None:
        proc, url = start_server(out / "server", [DOMAIN])
    try:
        start = "smollm2"
        if args.warm_epochs:
            stage("warm_start", warm, out / "warm", url, args)
            start = str((out / "warm").resolve())
        stage("probe", campaign, "probe", start, "train", args.probe_trials, out / "probe", url, args)
        pool_path = out / "pool.json"
        keep = ["--keep", args.keep, "--min-trials", str(min(args.probe_trials, 4))]
        stage("select", groundstate, "select", str(out / "probe"), "--out", str(pool_path), *keep)
        pool = Pool.read(pool_path)
        if len(pool.tasks) < args.tasks_per_step:
            stop_early(out, args, pool, times)
        stage(
            "eval_before",
            campaign,
            "eval",
            start,
            "test",
            args.eval_trials,
            out / "eval-step-0",
            url,
            args,
        )
        stage("train", train, start, pool_path, out / "train", url, args)
        evaluated = [(0, out / "eval-step-0")]
        checkpoints = sorted((out / "train" / "checkpoints").glob("step-*"))
        for checkpoint in [*checkpoints, out / "train" / "final"]:
            step = args.steps if checkpoint.name == "final" else int(checkpoint.name.removeprefix("step-"))
            if step in dict(evaluated):
                continue
            run = out / f"eval-step-{step}"
            model = str(checkpoint.resolve())
            stage(f"eval_step_{step}", campaign, "eval", model, "test", args.eval_trials, run, url, args)
            evaluated.append((step, run))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    log = [StepLog.model_validate_json(x) for x in (out / "train" / LOG_FILE).read_text().splitlines() if x]
    report: dict[str, Any] = {
        "model": "SmolLM2-135M-Instruct"
        + (f", warm-started ({args.warm_epochs} epoch)" if args.warm_epochs else ""),
        "cpu_note": "a 2-core CPU",
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "pool": {"tasks": len(pool.tasks), "histogram": pool.histogram},
        "held_out": [{"step": step, **held_out(run)} for step, run in sorted(evaluated)],
        "train_log": [line.model_dump(mode="json") for line in log],
        "wall_s": times,
    }
    before, after = report["held_out"][0], report["held_out"][-1]
    report["learned"] = bool(before["ci95"] and after["pass_at_1"] > before["ci95"][1])
    (out / "learning.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(report, out / "learning.png")
    print(
        f"held-out pass@1 {before['pass_at_1']:.3f} (95% {before['ci95']}) -> {after['pass_at_1']:.3f} "
        f"(95% {after['ci95']}) after {args.steps} steps; above the upper end before: {report['learned']}"
    )


if __name__ == "__main__":
    main()
