"""Per-turn credit for trainers: the server's per-call credit, folded onto the policy's turns.

Every score carries per-call credit (`ScoreResult.credit`, docs/diagnostics.md): which call made which
change and whether that change is needed, wrong, collateral or undone. A trainer thinks in turns, not calls,
so `turn_credit` maps the episode's calls back to the turns that made them: a turn's value is +1 for each
of its calls labelled `needed`, -1 for each `wrong` or `collateral` one, 0 otherwise (reads, refusals,
undone changes, calls the server never ran), and the turn holding the first decisive deviation is marked.

It is a diagnostic signal. The training reward stays the server's binary reward unless a recipe opts in:
`groundstate train local --credit-weight W` gives a *failed* episode of a group that the binary reward
already splits the reward `W * max(0, partial)`, where `partial = (needed - bad) / (needed + bad)` over its
labelled calls. W is at most 0.5, so a failure never ranks with a success, and a group whose episodes all
fail stays uninformative: partial progress reorders the failures of a mixed group, it cannot make a group
informative on its own, and a write the user never agreed to still scores 0 on the binary reward.
"""

from __future__ import annotations

from pydantic import Field

from shared.strict_model import StrictModel
from trainer.rollout_models import RolloutResult

__all__ = ["MAX_CREDIT_WEIGHT", "TurnCredit", "partial_progress", "shaped_reward", "turn_credit"]

MAX_CREDIT_WEIGHT = 0.5
"""The largest `--credit-weight`: a failure's shaped reward stays below a success's 1."""

_VALUE = {"needed": 1, "wrong": -1, "collateral": -1}
_RAN = ("ok", "error")  # a rollout's call outcomes that the server recorded as calls (ran or refused)


class TurnCredit(StrictModel):
    """What one policy turn's calls did to the expected outcome."""

    turn: int = Field(ge=0, description="The turn's index in `RolloutResult.turns`.")
    labels: list[str] = Field(
        default_factory=list,
        description="One label per tool call of the turn: the server's credit label for a call it ran, "
        "else the rollout's outcome (`unparsable`, `unknown-tool`, `invalid-arguments`, ...).",
    )
    value: int = Field(description="+1 per needed call, -1 per wrong or collateral call.")
    deviation: bool = Field(default=False, description="The episode's first decisive deviation is here.")


def turn_credit(result: RolloutResult) -> list[TurnCredit] | None:
    """Per-turn credit of a scored episode; None when the score carries no credit (or none was scored)."""
    credit = result.score.credit if result.score is not None else None
    if credit is None:
        return None
    outcomes = [str(e.data.get("outcome", "")) for e in result.events if e.kind == "tool_call"]
    deviation = credit.first_deviation.call_index if credit.first_deviation else None
    turns, call, ran = [], 0, 0
    for index, turn in enumerate(result.turns):
        labels: list[str] = []
        value, here = 0, False
        for _ in turn.tool_calls:
            outcome = outcomes[call] if call < len(outcomes) else "not-run"
            call += 1
            if outcome in _RAN and ran < len(credit.calls):
                label = credit.calls[ran].label
                here = here or ran == deviation
                ran += 1
                value += _VALUE.get(label, 0)
                labels.append(label)
            else:
                labels.append(outcome)
        turns.append(TurnCredit(turn=index, labels=labels, value=value, deviation=here))
    return turns


def partial_progress(result: RolloutResult) -> float:
    """`(needed - bad) / (needed + bad)` over the episode's labelled calls; 0 without any."""
    turns = turn_credit(result) or []
    labels = [label for t in turns for label in t.labels]
    needed = labels.count("needed")
    bad = labels.count("wrong") + labels.count("collateral")
    return (needed - bad) / (needed + bad) if needed + bad else 0.0


def shaped_reward(result: RolloutResult, weight: float) -> float:
    """The reward of a recipe that opts in: 1 for a success, `weight * max(0, partial)` for a failure."""
    if not 0 <= weight <= MAX_CREDIT_WEIGHT:
        raise ValueError(f"the credit weight must be in [0, {MAX_CREDIT_WEIGHT}], got {weight}")
    if result.reward == 1:
        return 1.0
    return weight * max(0.0, partial_progress(result)) if weight else 0.0
