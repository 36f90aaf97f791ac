"""Minting: fresh train tasks for a running training, generated, validated and stored by the server.

An adaptive curriculum runs out of informative tasks as the policy learns; the generator's supply is
unlimited. `POST /v1/tasks/mint` joins them: the server draws from the families asked for, runs every check of
`tasks validate` on each draw (the adversarial suite included) on the sandbox backend that will serve it, and
stores the valid ones, so every worker and replica serves them at once and a restart keeps them.

What a client cannot do: send a task. The server builds each task itself from a domain's families, so a
caller can neither smuggle in a task with a weak reward nor a test task. Minted tasks are train tasks, their
ids `<domain>-gen-<family>-<index>` with indices from `MINT_FLOOR` up (above any `tasks generate` run's),
their entities disjoint from every hand-written task's, and a draw index is never reused for a family.
"""

from __future__ import annotations

from collections.abc import Iterator

from env_server.domain import Domain
from env_server.errors import InvalidRequestError
from env_server.generation.generator import Draw, draw, use_domain
from env_server.scoring.scorer import Scorer
from env_server.store.minted import MintedTask, MintedTasks
from shared.models import MintDiscard, MintRequest, MintResult

__all__ = ["MINT_FLOOR", "mint"]

MINT_FLOOR = 900_000
"""The first draw index of minted tasks: `tasks generate` numbers from 0, so ids never collide."""

ATTEMPTS_PER_TASK = 3
"""Draws allowed per task asked for before the request gives up (most families keep nearly every draw)."""

_RACES = 3
"""Times a draw is tried again at a fresh index when another worker stored the same index first."""


def mint(request: MintRequest, domain: Domain, scorer: Scorer, minted: MintedTasks) -> MintResult:
    """Draw from the families in turn until `request.n` tasks are valid and stored (or the attempts run out).

    Raises:
        InvalidRequestError: the domain has no families, or `families` names one it does not have.
    """
    families = _families(request, domain)
    use_domain(domain)
    result = MintResult(tasks=[])
    budget = ATTEMPTS_PER_TASK * request.n
    cursor = dict.fromkeys(families, MINT_FLOOR)  # past this request's discarded draws too
    for family, _ in zip(_round_robin(families), range(budget), strict=False):
        if len(result.tasks) == request.n:
            break
        outcome = _draw_and_store(request, family, cursor, scorer, minted)
        if outcome.task is not None:
            result.tasks.append(outcome.task.public())
        else:
            result.discarded.append(MintDiscard(family=family, reason=outcome.discarded or "no task"))
    return result


def _families(request: MintRequest, domain: Domain) -> list[str]:
    """The families to draw from, checked against the domain's."""
    known = [f.name for f in domain.families]
    if not known:
        raise InvalidRequestError(f"domain {domain.name} declares no scenario families", field="domain")
    wanted = list(dict.fromkeys(request.families or known))
    unknown = [f for f in wanted if f not in known]
    if unknown:
        raise InvalidRequestError(
            f"domain {domain.name} has no family '{unknown[0]}' (families: {', '.join(known)})",
            field="families",
        )
    return wanted


def _round_robin(families: list[str]) -> Iterator[str]:
    while True:
        yield from families


def _draw_and_store(
    request: MintRequest, family: str, cursor: dict[str, int], scorer: Scorer, minted: MintedTasks
) -> Draw:
    """One validated draw at the family's next free index, stored; a lost race draws at the next index.

    `cursor` holds, per family, the index after this request's last draw: a discarded draw stores nothing,
    so the store alone would hand out its index again.
    """
    outcome = Draw(0, family, None, "no free index")
    for _ in range(_RACES):
        index = minted.next_index(request.domain, family, cursor[family])
        cursor[family] = index + 1
        outcome = draw(request.domain, request.seed, index, family_name=family, scorer=scorer)
        if outcome.task is None:
            return outcome
        if minted.add([MintedTask(outcome.task, family, index, request.seed)]):
            return outcome
    return outcome
