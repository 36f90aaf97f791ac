"""Fresh tasks for the adaptive curriculum, minted by the server when the curriculum's band runs thin.

The families asked for are those whose posterior sits in the band (`POST /v1/tasks/mint`).

The server builds and validates every task itself (the caller names families, never a task), so nothing
here can weaken a reward. What this side guards is the split: a minted task that is not a train task is
refused before the curriculum ever sees it, so no test task can be drawn for training.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from shared.client import AsyncGroundstateClient
from shared.models import MAX_MINT, MintRequest
from trainer.curriculum import Curriculum, CurriculumError

__all__ = ["MintOutcome", "Minter"]


@dataclass
class MintOutcome:
    """What one top-up asked for and got."""

    asked: dict[str, int] = field(default_factory=dict)
    """Tasks asked for, per domain."""
    minted: list[str] = field(default_factory=list)
    """The new tasks' ids, admitted to the curriculum."""
    discarded: int = 0
    """Draws the server threw away on the way (its validation, or a family that could not build one)."""


@dataclass
class Minter:
    """Asks the server for tasks when the curriculum's band runs thin, at most `per_step` a step.

    Attributes:
        per_step: the most tasks minted before one step (0: never).
        families: every family the server offers for the pool's domains, as `domain/family`.
        seed: the run's seed; each step's request is seeded with it and the step number.
    """

    per_step: int
    families: list[str]
    seed: int = 0

    async def top_up(self, curriculum: Curriculum, slots: int, client: AsyncGroundstateClient) -> MintOutcome:
        """Mint what the band lacks for `slots` from its in-band families, and admit it to the curriculum.

        Raises:
            CurriculumError: the server returned a task that is not a train task.
        """
        outcome = MintOutcome()
        need = min(self.per_step, curriculum.shortfall(slots))
        wanted = curriculum.families_in_band(self.families) if need else []
        by_domain: dict[str, list[str]] = defaultdict(list)
        for family in wanted:
            domain, _, name = family.partition("/")
            by_domain[domain].append(name)
        for i, (domain, names) in enumerate(by_domain.items()):
            n = min(MAX_MINT, need // len(by_domain) + (i < need % len(by_domain)))
            if n == 0:
                continue
            request = MintRequest(domain=domain, families=names, n=n, seed=self.seed + curriculum.state.step)
            result = await client.mint(request)
            leaked = [t.id for t in result.tasks if t.split != "train"]
            if leaked:
                raise CurriculumError(f"the server minted tasks that are not train tasks: {leaked}")
            outcome.asked[domain] = n
            outcome.minted += curriculum.add([t.id for t in result.tasks], minted=True)
            outcome.discarded += len(result.discarded)
        return outcome
