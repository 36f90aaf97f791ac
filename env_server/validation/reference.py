"""A task's reference trajectory: the canonical policy-following conversation, for oracles and people.

It is the conversation validation scores 1 (`_flow.honest_script` with the gold's calls and the task's
reference reply); an analytics task's calls are the gold SQL through `sql_query` and its rows to
`submit_answer`. `GET /v1/tasks/{id}/reference` serves it, and the `replay` policy plays its agent side.
In a dual-control task the customer's own calls are no steps of it: the scripted customer makes them while
it answers (a live episode runs them, `POST /v1/score` replays them where the transcript says the acting
line).
"""

from __future__ import annotations

from env_server.domain import Domain
from env_server.scoring.scorer import Scorer
from env_server.scoring.trajectory import Message
from env_server.validation._flow import honest_script
from shared.models import ReferenceStep, ReferenceTrajectory, ToolCallSpec
from shared.tasks import GoldAction, Task


def reference_trajectory(task: Task, domain: Domain, scorer: Scorer) -> ReferenceTrajectory:
    """The task's canonical conversation, calls interleaved."""
    actions = list(task.gold_actions)
    if task.kind == "analytics" and task.analytics is not None:
        rows = scorer.gold_rows(task, domain)
        actions += [
            GoldAction(name="sql_query", arguments={"sql": task.analytics.gold_sql}),
            GoldAction(name="submit_answer", arguments={"rows": rows}),
        ]
    ref = task.reference_reply
    talk = honest_script(task, domain, actions, ref.text if ref else None, bool(ref and ref.after_writes))
    return ReferenceTrajectory(
        task_id=task.id,
        steps=[
            ReferenceStep(role=line.role, content=line.content)
            if isinstance(line, Message)
            else ReferenceStep(
                role="assistant", tool_call=ToolCallSpec(name=line.name, arguments=line.arguments)
            )
            for line in talk.lines
            if isinstance(line, Message) or line.actor == "agent"  # the customer acts inside their reply
        ],
    )
