"""Static versus adaptive pool with a real model: SmolLM2 under `train local` on the starter tasks.

The simulated learner of `benchmarks/curriculum.py` studies the schedule at scale; this is the same
comparison with the real trainer, the real server and a real 135M model, on the whole starter curriculum
(the one- and two-request tasks). Every stage is the real command line against a server started here:

0. warm    `train warm-start` from SmolLM2-135M-Instruct (as `benchmarks/learning.py`): the shared start;
1. pool    every starter train task (`probe --policy replay` + `select --keep too_easy`: the gold solves
           every task, so the pool is the whole train split; its band labels play no part in training);
2. before  `eval` of the start model on every starter test task;
3. static  `train local` for `--steps` steps, tasks in TRL's shuffled order; then `eval`;
4. adaptive `train local --curriculum adaptive --mint-per-step N` for the same steps, groups and episodes;
           the server mints fresh tasks from the starter families whenever the band runs thin; then `eval`.

Both arms spend the same budget: `--steps` x `--tasks-per-step` slots of `--episodes-per-task` episodes
(refills of uninformative groups are allowed equally). The report (`real.json`) gives, per arm, the share
of informative groups per step, the episodes spent on zero-variance groups, the tasks minted, and the
held-out pass@1 with its 95% interval. Each stage skips what its outputs hold, so a killed run resumes.

    python benchmarks/curriculum_real.py --out benchmarks/results/curriculum/real   # ~1.5 hours on 2 cores
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._serve import start_server
from benchmarks.learning import DOMAIN, campaign, groundstate, held_out, task_ids, warm
from shared.curriculum import CURRICULUM_LOG, read_curriculum_log
from trainer.train_local import LOG_FILE, StepLog


def whole_pool(out: Path, url: str, args: argparse.Namespace) -> Path:
    pool = out / "pool.json"
    if not pool.is_file():
        groundstate(
            "probe", "--policy", "replay", "--server", url, "--tasks", task_ids(url, "train", args.tags),
            "--trials", "1", "--out", str(out / "probe"), "--quiet",
        )  # fmt: skip
        groundstate(
            "select", str(out / "probe"), "--out", str(pool), "--keep", "too_easy", "--min-trials", "1"
        )
    return pool


def train(arm: str, start: str, pool: Path, out: Path, url: str, args: argparse.Namespace) -> None:
    if (out / "final" / "config.json").is_file():
        return
    adaptive = (
        ["--curriculum", "adaptive", "--mint-per-step", str(args.mint_per_step)] if arm == "adaptive" else []
    )
    groundstate(
        "train", "local", "--pool", str(pool), "--model", start, "--steps", str(args.steps),
        "--out", str(out), "--server", url,
        "--tasks-per-step", str(args.tasks_per_step), "--episodes-per-task", str(args.episodes_per_task),
        "--lr", str(args.lr), "--temperature", str(args.temperature),
        "--max-new-tokens", str(args.max_new_tokens), "--max-turns", str(args.max_turns),
        "--micro-batch", str(args.micro_batch), "--threads", str(args.threads), "--seed", str(args.seed),
        "--quiet", *adaptive,
    )  # fmt: skip


def arm_report(out: Path, eval_run: Path, group: int) -> dict[str, Any]:
    log = [StepLog.model_validate_json(x) for x in (out / LOG_FILE).read_text().splitlines() if x]
    tries = [line.informative_groups + line.uninformative for line in log]
    report: dict[str, Any] = {
        "held_out": held_out(eval_run),
        "informative_share_per_step": [
            round(line.informative_groups / t, 3) if t else None for line, t in zip(log, tries, strict=True)
        ],
        "informative_groups": sum(line.informative_groups for line in log),
        "groups_played": sum(tries),
        "zero_variance_episodes": sum(line.uninformative for line in log) * group,
        "episodes": sum(line.episodes for line in log),
        "reward_mean_per_step": [line.reward_mean for line in log],
    }
    if (out / CURRICULUM_LOG).is_file():
        records = read_curriculum_log(out)
        report["minted"] = sum(r.minted for r in records)
        report["band_per_step"] = [r.band for r in records]
        report["retired"] = sum(len(r.retired) for r in records)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/curriculum/real"))
    parser.add_argument("--warm-epochs", type=int, default=1)
    parser.add_argument("--warm-lr", type=float, default=3e-5)
    parser.add_argument("--warm-tasks", default="starter-renew-101,starter-return-101")
    parser.add_argument(
        "--tags", default="", help="Only starter tasks with one of these tags (all if empty)."
    )
    parser.add_argument("--eval-trials", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--episodes-per-task", type=int, default=4)
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--mint-per-step", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    times_path = out / "times.json"
    times: dict[str, float] = json.loads(times_path.read_text()) if times_path.is_file() else {}

    def stage(name: str, fn: Any, *fn_args: Any) -> None:
        if name in times:
            return
        started = time.monotonic()
        fn(*fn_args)
        times[name] = round(time.monotonic() - started, 1)
        times_path.write_text(json.dumps(times, indent=2) + "\n")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    proc, url = start_server(out / "server", [DOMAIN])
    try:
        stage("warm_start", warm, out / "warm", url, args)
        start = str((out / "warm").resolve())
        pool = whole_pool(out, url, args)
        stage(
            "eval_before", campaign, "eval", start, "test", args.eval_trials, out / "eval-before", url, args
        )
        for arm in ("static", "adaptive"):
            stage(f"train_{arm}", train, arm, start, pool, out / arm, url, args)
            final = str((out / arm / "final").resolve())
            stage(
                f"eval_{arm}",
                campaign,
                "eval",
                final,
                "test",
                args.eval_trials,
                out / f"eval-{arm}",
                url,
                args,
            )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    report: dict[str, Any] = {
        "model": f"SmolLM2-135M-Instruct, warm-started ({args.warm_epochs} epoch)",
        "cpu_note": "a 2-core CPU",
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "held_out_before": held_out(out / "eval-before"),
        "static": arm_report(out / "static", out / "eval-static", args.episodes_per_task),
        "adaptive": arm_report(out / "adaptive", out / "eval-adaptive", args.episodes_per_task),
        "wall_s": times,
    }
    (out / "real.json").write_text(json.dumps(report, indent=2) + "\n")
    for arm in ("static", "adaptive"):
        r = report[arm]
        print(
            f"{arm:9} informative {r['informative_groups']}/{r['groups_played']} groups, "
            f"held-out pass@1 {r['held_out']['pass_at_1']:.3f} (95% {r['held_out']['ci95']})"
        )


if __name__ == "__main__":
    main()
