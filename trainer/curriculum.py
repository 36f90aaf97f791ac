"""A curriculum that follows the policy: discounted Jeffreys posteriors, a learning band, retirement.

`groundstate select` bands the train tasks once, by the starting model's success. During GRPO the policy
moves: mastered tasks keep being drawn (zero-variance groups, compute for nothing) and tasks that were out
of reach and became learnable are never tried again. This curriculum keeps, for every task, a Beta posterior
of the *current* policy's success, and draws each step from where groups are likely to disagree.

The posterior. Task i after step t has discounted counts

    s_i <- gamma * s_i + successes_i(t)        f_i <- gamma * f_i + failures_i(t)

and posterior Beta(s_i + 1/2, f_i + 1/2) (Jeffreys prior, as `trainer.selection`). Every count decays every
step, seen or not (discounted Thompson sampling; Raj & Kalyani, 2017): the policy that produced old
outcomes is gone, and with gamma = 0.8 the evidence of five steps ago weighs a third of this step's. A task
left alone drifts back towards the prior, which is what lets exploration find a hard task that became
reachable.

The band. What GRPO learns from is a group of G episodes with both outcomes. Under the posterior the chance
of that is

    informative_i = E[1 - p^G - (1 - p)^G] = 1 - B(a + G, b) / B(a, b) - B(a, b + G) / B(a, b)

(`mixed_chance`). The learning band is the tasks whose chance reaches `min_informative`; a step's slots are
drawn from it with weights proportional to that chance, and a share `explore` of the slots goes to the
tasks drawn least recently (never-drawn first). A task is retired when the posterior puts
`retire_confidence` of its mass at a success rate of `retire_at` or more (at the defaults: five perfect
groups of four in a row; discounting caps the evidence, so a lucky streak of two does not retire a task):
it is never drawn again.

The state is one JSON document (`CurriculumState`), saved with every checkpoint; draws are seeded by
(seed, step), so a resumed run draws what the uninterrupted one would have drawn. The state and the step
records are defined in `shared.curriculum` (re-exported here), because the server's viewer reads them too.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from scipy.special import betaln
from scipy.stats import beta as beta_dist

from shared.curriculum import (
    CURRICULUM_FILE,
    CURRICULUM_LOG,
    CurriculumSettings,
    CurriculumState,
    StepRecord,
    TaskEvidence,
    family_of,
)
from shared.strict_model import StrictModel

__all__ = [
    "CURRICULUM_FILE",
    "CURRICULUM_LOG",
    "Curriculum",
    "CurriculumError",
    "CurriculumSettings",
    "CurriculumState",
    "GroupOutcome",
    "StepRecord",
    "TaskEvidence",
    "family_of",
    "mixed_chance",
]
# The records (state, settings, evidence, step records) are `shared.curriculum`'s: the viewer reads them too.


class CurriculumError(ValueError):
    """A curriculum that cannot be built or resumed as asked (a test task, an empty pool, a bad state)."""


def mixed_chance(alpha: float, beta: float, group: int) -> float:
    """Posterior probability that a group of `group` episodes has both outcomes, under Beta(alpha, beta)."""
    base = betaln(alpha, beta)
    all_pass = math.exp(betaln(alpha + group, beta) - base)
    all_fail = math.exp(betaln(alpha, beta + group) - base)
    return max(0.0, 1.0 - all_pass - all_fail)


class GroupOutcome(StrictModel):
    """One played group: its task and the rewards of its scored episodes."""

    task_id: str
    rewards: list[int]


class Curriculum:
    """The living pool of one training run (see the module docstring)."""

    def __init__(self, state: CurriculumState) -> None:
        self.state = state

    @classmethod
    def start(cls, task_ids: Iterable[str], settings: CurriculumSettings) -> Curriculum:
        """A fresh curriculum over `task_ids` (train tasks only; the caller's pool guarantees it)."""
        ids = sorted(set(task_ids))
        if not ids:
            raise CurriculumError("the curriculum has no task to draw from")
        return cls(CurriculumState(settings=settings, tasks={t: TaskEvidence() for t in ids}))

    @classmethod
    def load(cls, path: Path) -> Curriculum:
        """Resume from a saved state."""
        try:
            return cls(CurriculumState.model_validate_json(path.read_text()))
        except (OSError, ValueError) as exc:
            raise CurriculumError(f"cannot resume the curriculum from {path}: {exc}") from exc

    def save(self, path: Path) -> Path:
        """Write the state as JSON (parent directories created); the path."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.state.model_dump_json(indent=1) + "\n")
        return path

    @property
    def settings(self) -> CurriculumSettings:
        """The run's curriculum settings."""
        return self.state.settings

    def add(self, task_ids: Iterable[str], *, minted: bool = False) -> list[str]:
        """Admit new tasks (e.g. freshly minted ones); the ids that were new."""
        new = [t for t in dict.fromkeys(task_ids) if t not in self.state.tasks]
        for task_id in new:
            self.state.tasks[task_id] = TaskEvidence()
        self.state.pending += new
        self.state.pending_minted += len(new) if minted else 0
        return new

    def retire(self, task_ids: Iterable[str]) -> None:
        """Stop drawing these tasks (e.g. minted ones the server no longer serves); their history stays."""
        for task_id in task_ids:
            evidence = self.state.tasks[task_id]
            evidence.retired = self.state.step if evidence.retired is None else evidence.retired

    def informative(self, task_id: str) -> float:
        """The chance that a group of this task has both outcomes, under its posterior."""
        evidence = self.state.tasks[task_id]
        return mixed_chance(evidence.alpha, evidence.beta, self.settings.group)

    def active(self) -> list[str]:
        """Tasks not retired."""
        return [t for t, e in self.state.tasks.items() if e.retired is None]

    def band(self) -> list[str]:
        """Active tasks whose chance of a mixed group reaches `min_informative`, most informative first."""
        return list(self._band_chances())

    def _band_chances(self) -> dict[str, float]:
        """The band, most informative first, with each task's chance of a mixed group."""
        scored = [(self.informative(t), t) for t in self.active()]
        ranked = sorted(scored, key=lambda x: (-x[0], x[1]))
        return {t: chance for chance, t in ranked if chance >= self.settings.min_informative}

    def draw(self, slots: int) -> list[str]:
        """The next step's tasks: band draws weighted by informativeness, plus the exploration share."""
        rng = random.Random(f"{self.settings.seed}:{self.state.step}")
        active = self.active()
        if not active:
            raise CurriculumError("every task of the curriculum is retired: nothing left to learn from")
        explore = min(slots, round(self.settings.explore * slots))
        chosen = self._weighted(self._band_chances(), slots - explore, rng)
        rest = [t for t in active if t not in chosen]
        stale = sorted(rest, key=lambda t: (self.state.tasks[t].last_drawn or -1, rng.random()))
        chosen += stale[: slots - len(chosen)]
        while len(chosen) < slots:  # fewer active tasks than slots: repeat the most informative
            chosen.append(max(active, key=self.informative))
        return chosen

    def refills(self, slots: Sequence[str]) -> list[str]:
        """Tasks that may replace a slot whose group had no variance: the band, outside the step's slots."""
        taken = set(slots)
        return [t for t in self.band() if t not in taken]

    def _weighted(self, band: dict[str, float], n: int, rng: random.Random) -> list[str]:
        """Up to n distinct band tasks, drawn without replacement with weight = chance of a mixed group."""
        pool = dict(band)
        chosen: list[str] = []
        while pool and len(chosen) < n:
            pick = rng.choices(list(pool), weights=list(pool.values()))[0]
            chosen.append(pick)
            del pool[pick]
        return chosen

    def update(self, outcomes: Sequence[GroupOutcome]) -> StepRecord:
        """Fold in one step's played groups (every try), decay the old evidence, retire what is mastered."""
        step = self.state.step + 1
        gamma = self.settings.decay
        for evidence in self.state.tasks.values():
            evidence.successes *= gamma
            evidence.failures *= gamma
        strangers = sorted({o.task_id for o in outcomes} - set(self.state.tasks))
        if strangers:  # the curriculum draws every task played: anything else did not come from it
            raise CurriculumError(f"outcomes of tasks outside the curriculum: {', '.join(strangers)}")
        for outcome in outcomes:
            evidence = self.state.tasks[outcome.task_id]
            wins = sum(1 for r in outcome.rewards if r == 1)
            evidence.successes += wins
            evidence.failures += len(outcome.rewards) - wins
            evidence.drawn += 1
            evidence.last_drawn = step
        retired = []
        for task_id in self.active():
            evidence = self.state.tasks[task_id]
            mastered = beta_dist(evidence.alpha, evidence.beta).sf(self.settings.retire_at)
            if mastered >= self.settings.retire_confidence:
                evidence.retired = step
                retired.append(task_id)
        self.state.step = step
        played = {o.task_id for o in outcomes}
        added, minted = self.state.pending, self.state.pending_minted
        self.state.pending, self.state.pending_minted = [], 0
        return StepRecord(
            step=step,
            band=len(self.band()),
            active=len(self.active()),
            retired=retired,
            groups=len(outcomes),
            informative_groups=sum(len(set(o.rewards)) > 1 for o in outcomes),
            families=self.families(),
            tasks={t: round(self.state.tasks[t].mean, 4) for t in sorted(played)},
            added=added,
            minted=minted,
        )

    def families(self) -> dict[str, float]:
        """Mean posterior success per generator family, over its tasks' pooled discounted counts."""
        return {f: round((s + 0.5) / (s + f_ + 1.0), 4) for f, (s, f_) in self._family_counts().items()}

    def _family_counts(self) -> dict[str, tuple[float, float]]:
        """Discounted (successes, failures) per generator family, pooled over its tasks (retired included)."""
        counts: dict[str, tuple[float, float]] = {}
        for task_id, evidence in self.state.tasks.items():
            family = family_of(task_id)
            if family is not None:
                s, f = counts.get(family, (0.0, 0.0))
                counts[family] = (s + evidence.successes, f + evidence.failures)
        return dict(sorted(counts.items()))

    def families_in_band(self, families: Iterable[str]) -> list[str]:
        """Of `families` (`domain/family`), those whose pooled posterior sits in the band, best first.

        A family none of whose tasks has been played has the prior's chance of a mixed group, which is in
        the band for any G >= 2 at the default threshold: an untried family is worth minting from. One whose
        tasks the policy has mastered (or never solves) has left the band, and minting from it would only
        add zero-variance groups.
        """
        counts = self._family_counts()
        chances = {
            family: mixed_chance(s + 0.5, f + 0.5, self.settings.group)
            for family in dict.fromkeys(families)
            for s, f in [counts.get(family, (0.0, 0.0))]
        }
        ranked = sorted(chances, key=lambda family: (-chances[family], family))
        return [family for family in ranked if chances[family] >= self.settings.min_informative]

    def shortfall(self, slots: int) -> int:
        """How many tasks the band lacks to hold a step's `slots`: the band runs thin below that.

        A step draws most slots from the band and refills uninformative groups from the rest of it; with
        fewer band tasks than slots, draws repeat the stale end of the pool and refills run dry.
        """
        return max(0, slots - len(self.band()))
