"""The `reference-replies` check: an honest reply, and its paraphrases, earn every fact a task asks for.

The `communicate` rules refuse recitals, dumps, sprays, echoes and negations; this check proves they still
pay an honest agent. Each task with `communicate` items carries a `reference_reply` (what a good agent
says, and at least one paraphrase in other words); each is played in the canonical policy-following
conversation with the gold's calls and must score 1.
"""

from __future__ import annotations

from env_server.validation._replay import Replayer, failures
from env_server.validation._report import CheckOutcome


def reply_check(replayer: Replayer) -> CheckOutcome:
    """The reference reply and each paraphrase, told with the gold's calls, score 1."""
    task = replayer.task
    ref = task.reference_reply
    if ref is None:
        return CheckOutcome(
            "reference-replies",
            False,
            "the task asks the agent to tell facts but has no reference_reply: write what a good agent "
            "says, and a paraphrase of it in other words",
        )
    for label, text in [("the reference reply", ref.text)] + [
        (f"paraphrase {i + 1}", p) for i, p in enumerate(ref.paraphrases)
    ]:
        result, _ = replayer.play(replayer.honest(task.gold_actions, reply=text))
        if result.reward != 1:
            return CheckOutcome(
                "reference-replies", False, f"{label} scores {result.reward}: {failures(result)}"
            )
    return CheckOutcome(
        "reference-replies", True, f"the reply and {len(ref.paraphrases)} paraphrases earn every item"
    )
