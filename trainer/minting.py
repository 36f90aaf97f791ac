"""Fresh tasks for the adaptive curriculum, minted by the server when the curriculum's band runs thin.

The families asked for are those whose posterior sits in the band (`POST /v1/tasks/mint`).

The server builds and validates every task itself (the caller names families, never a task), so nothing
here can weaken a reward. What this side guards is the split: a minted task that is not a train task is
refused before the curriculum ever sees it, so no test task can be drawn for training.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.client import AsyncGroundstateClient, GroundstateClient
from shared.models import MAX_MINT, DomainDetail, MintRequest, MintResult
from shared.tasks import TaskPublic
from trainer.curriculum import Curriculum, CurriculumError

__all__ = ["MintOutcome", "Minter", "MintingError", "families_of"]


class MintingError(ValueError):
    """Minting was asked for where it cannot run (no domain of the pool has a scenario family)."""


def families_of(details: Sequence[DomainDetail]) -> list[str]:
    """Every family the server offers for these domains, as `domain/family` (what a `Minter` draws from).

    Raises:
        MintingError: None of the domains has a scenario family, so nothing could ever be minted.
    """
    families = [f"{d.name}/{family}" for d in details for family in d.families]
    if not families:
        names = ", ".join(d.name for d in details)
        raise MintingError(f"--mint-per-step: no domain of the pool ({names}) has a scenario family")
    return families


@dataclass
class MintOutcome:
    """What one top-up asked for and got."""

    asked: dict[str, int] = field(default_factory=dict)
    """Tasks asked for, per domain."""
    minted: list[str] = field(default_factory=list)
    """The new tasks' ids, admitted to the curriculum."""
    tasks: list[TaskPublic] = field(default_factory=list)
    """The admitted tasks as the server described them (`minted`'s order): a Verl run makes rows of them."""
    discarded: int = 0
    """Draws the server threw away on the way (its validation, or a family that could not build one)."""


@dataclass
class Minter:
    """Asks the server for tasks when the curriculum's band runs thin, at most `per_step` a step.

    The rule (how many, from which families, with which seed) is `requests`, and what is admitted is
    `admit`; `top_up` (async, `train local`) and `top_up_sync` (Verl's trainer process) only differ in how
    they send the requests, so both trainers mint by the same rule.

    Attributes:
        per_step: the most tasks minted before one step (0: never).
        families: every family the server offers for the pool's domains, as `domain/family`.
        seed: the run's seed; each step's request is seeded with it and the step number.
    """

    per_step: int
    families: list[str]
    seed: int = 0

    def requests(self, curriculum: Curriculum, slots: int) -> list[MintRequest]:
        """What to ask the server for before the curriculum's next step of `slots` (nothing: a full band).

        What the band lacks, at most `per_step`, split evenly over the domains of the in-band families.
        """
        need = min(self.per_step, curriculum.shortfall(slots))
        wanted = curriculum.families_in_band(self.families) if need else []
        by_domain: dict[str, list[str]] = defaultdict(list)
        for family in wanted:
            domain, _, name = family.partition("/")
            by_domain[domain].append(name)
        requests = []
        for i, (domain, names) in enumerate(by_domain.items()):
            n = min(MAX_MINT, need // len(by_domain) + (i < need % len(by_domain)))
            if n:
                requests.append(
                    MintRequest(domain=domain, families=names, n=n, seed=self.seed + curriculum.state.step)
                )
        return requests

    @staticmethod
    def admit(curriculum: Curriculum, request: MintRequest, result: MintResult, outcome: MintOutcome) -> None:
        """Admit what the server minted for `request` into the curriculum, recording it in `outcome`.

        Raises:
            CurriculumError: the server returned a task that is not a train task (nothing is admitted).
        """
        leaked = [t.id for t in result.tasks if t.split != "train"]
        if leaked:
            raise CurriculumError(f"the server minted tasks that are not train tasks: {leaked}")
        outcome.asked[request.domain] = request.n
        new = set(curriculum.add([t.id for t in result.tasks], minted=True))
        admitted = [t for t in result.tasks if t.id in new]
        outcome.minted += [t.id for t in admitted]
        outcome.tasks += admitted
        outcome.discarded += len(result.discarded)

    async def top_up(self, curriculum: Curriculum, slots: int, client: AsyncGroundstateClient) -> MintOutcome:
        """Mint what the band lacks for `slots` from its in-band families, and admit it to the curriculum.

        Raises:
            CurriculumError: the server returned a task that is not a train task.
        """
        outcome = MintOutcome()
        for request in self.requests(curriculum, slots):
            self.admit(curriculum, request, await client.mint(request), outcome)
        return outcome

    def top_up_sync(
        self,
        curriculum: Curriculum,
        slots: int,
        client: GroundstateClient,
        outcome: MintOutcome | None = None,
    ) -> MintOutcome:
        """`top_up` with the synchronous client (Verl's trainer calls it between steps, outside any loop).

        `outcome` is filled request by request, so a caller that catches a failed request (one domain's)
        still knows what the earlier ones admitted.

        Raises:
            CurriculumError: the server returned a task that is not a train task.
            ClientError: a request failed (what was admitted before it is in `outcome`).
        """
        outcome = outcome if outcome is not None else MintOutcome()
        for request in self.requests(curriculum, slots):
            self.admit(curriculum, request, client.mint(request), outcome)
        return outcome
