"""Static pool against the adaptive curriculum on the same episode budget, with a simulated policy.

A real GRPO step on this CPU takes 8-9 minutes (README, "Proof that it learns"), so a schedule is studied on
a cheap stand-in whose learning has the one property that matters to a curriculum: **only a group with both
outcomes teaches anything** (GRPO's advantage is zero otherwise). The simulated policy:

- tasks belong to families; task i of family f succeeds with p = sigmoid(skill_f + offset_i);
- a group with both outcomes raises its family's skill by `lr` (transfer to the family's other tasks, the
  held-out ones included) and its own offset by `lr` (memorising); a zero-variance group changes nothing;
- families start spread from hopeless to nearly solved, so some become learnable only after others rise.

Both schedules spend the same budget of episodes (every group played counts, refills included):

- static: `probe` every train task (`--probe-trials`), `select` the hard, medium and easy bands once
  (`trainer.selection`), then draw the pool in shuffled epochs, refilling a zero-variance slot from the pool
  (`--replacements`, as `trainer.groups` does);
- adaptive: `trainer.curriculum.Curriculum` over every train task, refills from its band; the probe's
  budget is spent on training instead.

Reported per schedule, over seeds: the share of informative groups, episodes spent on zero-variance groups,
and held-out success (the expected success rate of the held-out tasks, exact under the simulation) after the
budget, with 95% intervals over seeds (t-interval).

    python benchmarks/curriculum.py --seeds 10 --json benchmarks/results/curriculum/simulated.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy.stats import t as student_t

from trainer.curriculum import Curriculum, CurriculumSettings, GroupOutcome
from trainer.selection import assign_band, jeffreys_posterior


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass
class World:
    """The simulated policy: family skills and task offsets; train and held-out task ids."""

    skill: dict[str, float]
    offset: dict[str, float]
    family: dict[str, str]
    train: list[str]
    held_out: list[str]
    lr: float
    rng: random.Random
    episodes: int = 0
    wasted: int = 0
    groups: int = 0
    informative: int = 0

    def p(self, task: str) -> float:
        return sigmoid(self.skill[self.family[task]] + self.offset[task])

    def play(self, task: str, group: int) -> list[int]:
        """One group: G episodes, and learning if it has both outcomes."""
        rewards = [int(self.rng.random() < self.p(task)) for _ in range(group)]
        self.episodes += group
        self.groups += 1
        if len(set(rewards)) > 1:
            self.informative += 1
            self.skill[self.family[task]] += self.lr
            self.offset[task] += self.lr
        else:
            self.wasted += group
        return rewards

    def held_out_success(self) -> float:
        return statistics.fmean(self.p(t) for t in self.held_out)


def world(seed: int, families: int, per_family: int, held_per_family: int, lr: float) -> World:
    rng = random.Random(seed)
    skill = {f"f{i}": -5.0 + 6.0 * i / (families - 1) + rng.gauss(0, 0.3) for i in range(families)}
    offset: dict[str, float] = {}
    family: dict[str, str] = {}
    train: list[str] = []
    held: list[str] = []
    for f in skill:
        for j in range(per_family + held_per_family):
            task = f"{f}-t{j:02d}"
            offset[task], family[task] = rng.gauss(0, 1.0), f
            (train if j < per_family else held).append(task)
    return World(skill, offset, family, train, held, lr, random.Random(seed + 10_000))


@dataclass
class Outcome:
    informative_share: float
    wasted_episodes: int
    held_out_before: float
    held_out_after: float
    pool: int = 0
    per_step_informative: list[float] = field(default_factory=list)


def run_static(w: World, args: argparse.Namespace, budget: int) -> Outcome:
    before = w.held_out_success()
    pool = []
    for task in w.train:  # probe: the policy plays, nothing is learnt (no gradient during a probe)
        wins = sum(int(w.rng.random() < w.p(task)) for _ in range(args.probe_trials))
        w.episodes += args.probe_trials
        if assign_band(jeffreys_posterior(wins, args.probe_trials)) in {"hard", "medium", "easy"}:
            pool.append(task)
    pool = pool or list(w.train)
    order: list[str] = []
    per_step = []
    while w.episodes < budget:
        step_groups, step_informative = 0, 0
        for _ in range(args.slots):
            if not order:
                order = pool[:]
                w.rng.shuffle(order)
            task = order.pop()
            spare = [t for t in pool if t != task]
            w.rng.shuffle(spare)
            for attempt in range(args.replacements + 1):
                rewards = w.play(task, args.group)
                step_groups += 1
                if len(set(rewards)) > 1:
                    step_informative += 1
                    break
                if attempt < args.replacements and spare:
                    task = spare.pop()
        per_step.append(step_informative / step_groups)
    share = w.informative / w.groups if w.groups else 0.0  # a budget the probe spent whole trains nothing
    return Outcome(share, w.wasted, before, w.held_out_success(), len(pool), per_step)


def run_adaptive(w: World, args: argparse.Namespace, budget: int, seed: int) -> Outcome:
    before = w.held_out_success()
    curriculum = Curriculum.start(w.train, CurriculumSettings(group=args.group, seed=seed))
    per_step = []
    while w.episodes < budget:
        slots = curriculum.draw(args.slots)
        refills = curriculum.refills(slots)
        w.rng.shuffle(refills)
        outcomes = []
        for task in slots:
            for attempt in range(args.replacements + 1):
                rewards = w.play(task, args.group)
                outcomes.append(GroupOutcome(task_id=task, rewards=rewards))
                if len(set(rewards)) > 1 or attempt == args.replacements or not refills:
                    break
                task = refills.pop()
        record = curriculum.update(outcomes)
        per_step.append(record.informative_groups / record.groups)
    return Outcome(w.informative / w.groups, w.wasted, before, w.held_out_success(), 0, per_step)


def interval(values: list[float]) -> tuple[float, float, float]:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = student_t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--families", type=int, default=8)
    parser.add_argument("--per-family", type=int, default=12, help="train tasks per family")
    parser.add_argument("--held-per-family", type=int, default=4, help="held-out tasks per family")
    parser.add_argument("--group", type=int, default=8, help="episodes per group (G)")
    parser.add_argument("--slots", type=int, default=16, help="groups per step")
    parser.add_argument("--steps", type=int, default=40, help="budget: steps x slots x G episodes")
    parser.add_argument("--replacements", type=int, default=2)
    parser.add_argument("--probe-trials", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    budget = args.steps * args.slots * args.group
    runs: dict[str, list[Outcome]] = {"static": [], "adaptive": []}
    for seed in range(args.seeds):
        make = (seed, args.families, args.per_family, args.held_per_family, args.lr)
        runs["static"].append(run_static(world(*make), args, budget))
        runs["adaptive"].append(run_adaptive(world(*make), args, budget, seed))
    report: dict[str, object] = {"settings": vars(args) | {"json": None}, "budget_episodes": budget}
    size = f"{args.families} families x {args.per_family} train tasks"
    print(f"{args.seeds} seeds, {budget} episodes each, {size}")
    header = f"{'schedule':<10} {'informative groups':>26} {'episodes on 0-variance':>28}"
    print(f"{header} {'held-out after':>26}")
    for name, outcomes in runs.items():
        share = interval([o.informative_share for o in outcomes])
        wasted = interval([o.wasted_episodes / budget for o in outcomes])
        after = interval([o.held_out_after for o in outcomes])
        before = statistics.fmean(o.held_out_before for o in outcomes)
        report[name] = {
            "informative_share": share,
            "zero_variance_episode_share": wasted,
            "held_out_before": before,
            "held_out_after": after,
            "static_pool_size": statistics.fmean(o.pool for o in outcomes) if name == "static" else None,
        }
        cell = "{:.1%} ({:.1%}-{:.1%})"
        print(f"{name:<10} {cell.format(*share):>26} {cell.format(*wasted):>28} {cell.format(*after):>26}")
    print(f"held-out success before training: {report['static']['held_out_before']:.1%}")  # type: ignore[index]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
