"""Both sandbox backends give the same tool results and scores for the same calls (docs/design/sandboxes.md).

Every action task's gold and wrong trajectories are replayed on SQLite and on PostgreSQL: each call's
output or refusal, the reward and the full diff must be equal. Every analytics task's gold SQL must give
answers that match each other under the scoring comparison (row order is not part of an answer).
"""

from __future__ import annotations

from typing import Any

import pytest

from env_server.analytics import answer_matches
from env_server.domain.registry import DomainRegistry
from env_server.sandbox import make_sandbox_engine
from env_server.scoring.scorer import Scorer
from env_server.validation._replay import Replayer
from shared.tasks import GoldAction, Task

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _outcome(scorer: Scorer, registry: DomainRegistry, task: Task, actions: list[GoldAction]) -> Any:
    """The calls told in the task's canonical conversation (reference reply, the user's yes), as validation
    plays them: each result, the reward and the diff."""
    score, results = Replayer(task, registry.domain(task.domain), scorer).run(actions)
    return [(r.output, r.error) for r in results], score.reward, [d.model_dump() for d in score.diff]


def test_every_task_replays_identically_on_both_backends(pg_url: str) -> None:
    registry = DomainRegistry.discover()
    sqlite, postgres = make_sandbox_engine("sqlite://"), make_sandbox_engine(pg_url)
    on_sqlite, on_postgres = Scorer(sqlite), Scorer(postgres)
    compared, differ = 0, []
    try:
        for task in registry.tasks():
            if task.kind == "analytics":
                domain = registry.domain(task.domain)
                a, b = on_sqlite.gold_rows(task, domain), on_postgres.gold_rows(task, domain)
                tolerance = task.analytics.tolerance if task.analytics else 0.0
                if len(a) != len(b) or not answer_matches(a, b, tolerance)[0]:
                    differ.append(f"{task.id}: {a[:3]} vs {b[:3]}")
                compared += 1
                continue
            for actions in (task.gold_actions, task.wrong_actions):
                if actions:
                    x, y = (
                        _outcome(on_sqlite, registry, task, actions),
                        _outcome(on_postgres, registry, task, actions),
                    )
                    if x != y:
                        differ.append(f"{task.id}: {str(x)[:300]} vs {str(y)[:300]}")
                    compared += 1
    finally:
        sqlite.close()
        postgres.close()
    assert compared > 350
    assert not differ, "\n".join(differ[:5])
