"""Analytics families: staff questions over the book, parameterised by state, thresholds and fresh rows.

Each draw adds a few fresh policies (or claims) in one rating state so the answer is never empty and
differs from draw to draw; the gold SQL is portable (ISO date literals, integer cents, CASE for rounding).
"""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import ScenarioContext, analytics_task
from env_server.domains.insurance.families._common import (
    ADJUSTER_THRESHOLD_CENTS,
    COVERAGE_BY_CAUSE,
    REINSTATE_WINDOW_DAYS,
    STATES,
    TODAY,
)
from env_server.domains.insurance.families._scene import Scene
from shared.tasks import Task

_STAFF = (
    "You are staff, asking a read-only question. Clarify the expected table if asked; accept an answer in "
    "the shape you asked for."
)
_ANALYSTS = (
    "Maren Holt, billing analyst",
    "Dev Anand, collections lead",
    "Lucia Ferraro, finance controller",
    "Bram de Vries, retention analyst",
)
_CLAIMS_STAFF = (
    "Ana Kovac, claims manager",
    "Theo Marchetti, reserving actuary",
    "Ruby Okonkwo, claims team supervisor",
    "Sam Whitfield, claims operations analyst",
)


def _analytics(
    ctx: ScenarioContext,
    scene: Scene,
    persona: str,
    tags: list[str],
    question: str,
    clarify: str,
    sql: str,
    description: str,
) -> Task:
    return analytics_task(
        ctx,
        persona=persona,
        description=description,
        script=[question, clarify],
        sql=" ".join(sql.split()),
        tags=tags,
        instructions=_STAFF,
        initial_patch=scene.initial_patch(),
    )


def billing_book(ctx: ScenarioContext) -> Task:
    """Billing questions on one state's book: arrears above k premiums, reinstatable lapses, plan counts."""
    scene, rng = Scene(ctx), ctx.rng
    state = rng.choice(STATES)
    question = rng.choice(("arrears", "reinstatable", "plan-counts", "past-due-by-status"))
    for _ in range(rng.randint(2, 4)):
        scene.holder(status="grace", state=state, past_due=lambda p: int(p * rng.uniform(0.4, 4.5)))
    for _ in range(rng.randint(1, 3)):
        days = rng.randint(3, 70)
        scene.holder(status="lapsed", state=state, status_day=TODAY - timedelta(days=days))
    persona = rng.choice(_ANALYSTS)
    join = "FROM policies p JOIN billing_accounts b ON b.policy_id = p.policy_id"
    if question == "arrears":
        k = rng.choice((1, 2, 3))
        # Rows added above: at least one grace policy must qualify, or the draw asks about nothing.
        scene.holder(status="grace", state=state, past_due=lambda p: p * k + rng.randint(1, p))
        return _analytics(
            ctx,
            scene,
            persona,
            ["billing", "grace", "comparison"],
            f"How many grace-period policies rated in {state} have a past-due amount above {k} times their "
            "monthly premium?",
            "Strictly more than that multiple of the policy's own monthly premium; just the count.",
            f"SELECT COUNT(*) {join} WHERE p.status = 'grace' AND p.state = '{state}' "
            f"AND b.past_due_cents > {k} * p.monthly_premium_cents",
            f"Grace-period policies in {state} more than {k} premium(s) behind.",
        )
    if question == "reinstatable":
        scene.holder(status="lapsed", state=state, status_day=TODAY - timedelta(days=rng.randint(1, 30)))
        cutoff = (TODAY - timedelta(days=REINSTATE_WINDOW_DAYS)).isoformat()
        return _analytics(
            ctx,
            scene,
            persona,
            ["billing", "reinstatement", "date-filter"],
            f"How many lapsed policies rated in {state} can still be reinstated under the 30-day rule, and "
            "what do they owe in total past-due premium, in cents?",
            f"One row: count, total past-due cents. Reinstatable means lapsed on or after {cutoff}.",
            f"SELECT COUNT(*), SUM(b.past_due_cents) {join} WHERE p.status = 'lapsed' "
            f"AND p.state = '{state}' AND p.lapsed_on >= '{cutoff}'",
            f"Reinstatable lapsed policies in {state}: count and past due.",
        )
    if question == "plan-counts":
        ceiling = "(b.past_due_cents + p.monthly_premium_cents - 1) / p.monthly_premium_cents"
        return _analytics(
            ctx,
            scene,
            persona,
            ["billing", "instalment-plan", "calculation", "rules"],
            f"For each grace-period policy rated in {state}, how many instalments would its catch-up plan "
            "have under our rule? Policy id and count.",
            "The rule: past-due amount divided by the monthly premium, rounded up, and at least 2. Include "
            "every grace policy in that state, even if the count is over 6.",
            f"SELECT p.policy_id, CASE WHEN {ceiling} < 2 THEN 2 ELSE {ceiling} END {join} "
            f"WHERE p.status = 'grace' AND p.state = '{state}'",
            f"Prescribed instalment counts for {state} grace-period policies.",
        )
    return _analytics(
        ctx,
        scene,
        persona,
        ["billing", "group-by"],
        f"What is the total past-due amount in cents per policy status, for policies rated in {state}? "
        "Only statuses whose past-due total is above zero.",
        "Status as stored (active, grace, lapsed, cancelled) and the total cents.",
        f"SELECT p.status, SUM(b.past_due_cents) {join} WHERE p.state = '{state}' AND b.past_due_cents > 0 "
        "GROUP BY p.status",
        f"Past-due totals per policy status in {state}.",
    )


def claims_book(ctx: ScenarioContext) -> Task:
    """Claims questions on one state's book: undecided exposure, approvable claims, recent intake."""
    scene, rng = Scene(ctx), ctx.rng
    state = rng.choice(STATES)
    question = rng.choice(("undecided-by-coverage", "approvable", "intake", "referrals"))
    for _ in range(rng.randint(2, 4)):
        holder = scene.holder(state=state, collision=True, comprehensive=True)
        for _ in range(rng.randint(1, 2)):
            cause = rng.choice(sorted(COVERAGE_BY_CAUSE))
            deductible = holder.deductible(COVERAGE_BY_CAUSE[cause])
            big = rng.random() < 0.3
            estimate = rng.randint(5_000, 12_000) * 100 if big else deductible + rng.randint(100, 3_000) * 100
            injuries = COVERAGE_BY_CAUSE[cause] == "collision" and rng.random() < 0.15
            reported = TODAY - timedelta(days=rng.randint(0, 25))
            status = rng.choice(("open", "open", "adjuster_review", "approved"))
            if status == "adjuster_review" and not (big or injuries or cause == "theft"):
                status = "open"
            scene.claim(
                holder,
                rng.choice(holder.active_vehicles),
                cause=cause,
                incident=reported - timedelta(days=rng.randint(0, 4)),
                reported=reported,
                estimate=estimate,
                injuries=injuries,
                status=status,
            )
    persona = rng.choice(_CLAIMS_STAFF)
    join = "FROM claims c JOIN policies p ON p.policy_id = c.policy_id"
    undecided = "c.status IN ('open', 'adjuster_review')"
    if question == "undecided-by-coverage" and any(
        r["status"] in ("open", "adjuster_review") for r in scene.patch["claims"]
    ):
        return _analytics(
            ctx,
            scene,
            persona,
            ["claims", "reserves", "group-by"],
            f"For policies rated in {state}, what is the total estimated damage in cents of claims still "
            "undecided (open or in adjuster review), per coverage?",
            "Coverage as stored and the total estimate; only coverages with such claims.",
            f"SELECT c.coverage, SUM(c.estimated_damage_cents) {join} WHERE p.state = '{state}' "
            f"AND {undecided} GROUP BY c.coverage",
            f"Undecided claim exposure per coverage in {state}.",
        )
    if question == "approvable" and _any_approvable(scene):
        return _analytics(
            ctx,
            scene,
            persona,
            ["claims", "adjuster", "rules", "calculation"],
            f"Which open claims on policies rated in {state} could an agent approve directly, and what would "
            "each pay? Claim id and payout in cents.",
            "Only status open. $5,000 or more, any injury, or a theft goes to an adjuster instead; the "
            "payout is the estimate minus the claim's deductible.",
            f"SELECT c.claim_id, c.estimated_damage_cents - c.deductible_cents {join} "
            f"WHERE p.state = '{state}' AND c.status = 'open' "
            f"AND c.estimated_damage_cents < {ADJUSTER_THRESHOLD_CENTS} AND NOT c.injuries "
            "AND c.cause <> 'theft'",
            f"Open claims in {state} an agent could approve, with payouts.",
        )
    if question == "referrals" and any(r["status"] == "adjuster_review" for r in scene.patch["claims"]):
        return _analytics(
            ctx,
            scene,
            persona,
            ["claims", "adjuster", "group-by"],
            f"How many claims on policies rated in {state} are in adjuster review, per cause?",
            "Cause as stored (e.g. vehicle_collision, theft) and the count; only causes with such claims.",
            f"SELECT c.cause, COUNT(*) {join} WHERE p.state = '{state}' AND c.status = 'adjuster_review' "
            "GROUP BY c.cause",
            f"Claims in adjuster review per cause in {state}.",
        )
    return _intake(ctx, scene, persona, state, join)


def _any_approvable(scene: Scene) -> bool:
    return any(
        r["status"] == "open"
        and r["estimated_damage_cents"] < ADJUSTER_THRESHOLD_CENTS
        and not r["injuries"]
        and r["cause"] != "theft"
        for r in scene.patch["claims"]
    )


def _intake(ctx: ScenarioContext, scene: Scene, persona: str, state: str, join: str) -> Task:
    latest = max(r["reported_on"] for r in scene.patch["claims"])  # ISO dates order as strings
    cutoffs = [(TODAY - timedelta(days=d)).isoformat() for d in (7, 14, 30)]
    since = ctx.rng.choice([c for c in cutoffs if c <= latest])
    return _analytics(
        ctx,
        scene,
        persona,
        ["claims", "date-filter"],
        f"How many claims on policies rated in {state} were reported on or after {since}, and what is their "
        "total estimated damage in cents?",
        "By the date reported, whatever their status. One row: count, total cents.",
        f"SELECT COUNT(*), SUM(c.estimated_damage_cents) {join} WHERE p.state = '{state}' "
        f"AND c.reported_on >= '{since}'",
        f"Claims reported in {state} since {since}: count and total estimate.",
    )
