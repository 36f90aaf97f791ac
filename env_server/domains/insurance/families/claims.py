"""Claim families: losses that cannot be filed (window, coverage, deductible) and the payout decision.

A claim filed in the episode gets the sandbox's first generated ID (CLM-90001), which a benchmark task
also names, so generated tasks never decide a claim filed in the same episode: the decision family works on
a claim the customer reported online (open, awaiting the payout decision), and the filing family covers
the losses rule 7 says are not filed at all.
"""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import (
    ReferenceReply,
    ScenarioContext,
    call,
    dollars_and_cents,
    month_day_year,
    reply,
    whole_dollars,
)
from env_server.domains.insurance.families._common import (
    ADJUSTER_THRESHOLD_CENTS,
    COVERAGE_BY_CAUSE,
    FILING_WINDOW_DAYS,
    INCIDENT,
    THANKS,
    TODAY,
    car,
)
from env_server.domains.insurance.families._scene import Scene
from shared.tasks import Task


def not_fileable(ctx: ScenarioContext) -> Task:
    """Rules 7.1, 7.2, 7.3, 7.5: too late, not in force, not covered, or not above the deductible.

    The wrong trajectory files the claim anyway (under the coverage a careless agent would pick).
    """
    scene, rng = Scene(ctx), ctx.rng
    variant = rng.choices(
        ("late", "not-in-force", "no-coverage", "below-deductible"), weights=(30, 25, 20, 25)
    )[0]
    cause = rng.choice(sorted(COVERAGE_BY_CAUSE))
    coverage = COVERAGE_BY_CAUSE[cause]
    filed_as = coverage
    incident = TODAY - timedelta(days=rng.randint(1, FILING_WINDOW_DAYS - 1))
    if variant == "late":
        incident = TODAY - timedelta(days=rng.choice((FILING_WINDOW_DAYS + 1, *range(32, 80))))
        holder = scene.holder(
            status=rng.choice(("active", "grace")),
            collision=True,
            comprehensive=True,
            term_start=TODAY - timedelta(days=rng.randint(100, 330)),
        )
        why = f"the incident on {incident} is more than 30 days ago"
        told = str(FILING_WINDOW_DAYS)
        said = reply(
            f"Claims must be filed within {told} days of the incident, and yours happened on "
            f"{month_day_year(incident)}, so I can't file it.",
            f"The {told}-day filing window for this loss has passed, I'm sorry.",
        )
    elif variant == "not-in-force":
        status = rng.choice(("lapsed", "cancelled"))
        ended = TODAY - timedelta(days=rng.randint(6, FILING_WINDOW_DAYS - 2))
        incident = ended + timedelta(days=rng.randint(1, (TODAY - ended).days - 1))
        holder = scene.holder(status=status, collision=True, comprehensive=True, status_day=ended)
        why = f"the policy was {status} on {ended}, before the incident"
        told = status
        said = reply(
            f"Your policy was {status} on {month_day_year(ended)}, before the incident, so the loss isn't "
            "covered.",
            f"The policy is {status}: it wasn't in force when this happened.",
        )
    elif variant == "no-coverage":
        if coverage == "collision":
            holder = scene.holder(collision=False, comprehensive=rng.random() < 0.5)
            filed_as = "comprehensive" if holder.has("comprehensive") else "liability"
        else:
            holder = scene.holder(collision=True, comprehensive=False)
            filed_as = "collision"
        why = f"the policy has no {'collision' if coverage == 'collision' else 'comprehensive'} coverage"
        told = "collision" if coverage == "collision" else "comprehensive"
        said = reply(
            f"This loss falls under {told} coverage, and your policy doesn't include it, so I can't file "
            "the claim.",
            f"This damage needs {told} coverage, which isn't on your policy.",
        )
    else:
        holder = scene.holder(collision=True, comprehensive=True)
        if holder.deductible(coverage) == 0:  # full glass: nothing is below it; a non-glass loss instead
            cause = rng.choice(("weather", "vandalism", "object_collision"))
            coverage = filed_as = COVERAGE_BY_CAUSE[cause]
        why = f"the estimate does not exceed the {coverage} deductible"
    deductible = holder.deductible(filed_as)
    if variant == "below-deductible":
        told = whole_dollars(deductible)
        estimate = rng.choice((deductible, rng.randint(deductible // 400, deductible // 100) * 100 - 5000))
        estimate = max(estimate, 5000)
        said = reply(
            f"Your {filed_as} deductible is {told} and the estimate is {dollars_and_cents(estimate)}, so a "
            "claim would pay nothing.",
            f"The repair doesn't exceed your {told} deductible, so filing wouldn't pay anything out.",
        )
    else:
        estimate = deductible + rng.randint(300, 4500) * 100 + rng.choice((0, 50))
    vehicle = rng.choice(holder.active_vehicles)
    pid = holder.policy_id
    file = call(
        "file_claim",
        policy_id=pid,
        vehicle_id=vehicle.vehicle_id,
        incident_date=incident.isoformat(),
        cause=cause,
        coverage=filed_as,
        estimated_damage_cents=estimate,
        injuries=False,
        description=INCIDENT[cause].capitalize() + ".",
    )
    user = holder.user(
        f"File a claim for the {car(vehicle)} on policy {pid}",
        [
            f"{holder.hello()} I need to file a claim on policy {pid} for my {car(vehicle)}: "
            f"{INCIDENT[cause]}.",
            f"{holder.identity_line()} It happened on {month_day_year(incident)} and the shop estimates "
            f"{dollars_and_cents(estimate)}. Nobody was hurt.",
            "Can't you make an exception?",
            "Okay, I understand.",
        ],
        detail="wants the damage paid",
        known={
            "policy_id": pid,
            "incident": f"{INCIDENT[cause]} on {incident}; repair estimate {dollars_and_cents(estimate)}; "
            f"nobody was hurt",
        },
        unknown=["the claim rules"],
        instructions="Give the incident details when asked. If the agent says the claim cannot be filed, "
        "ask once whether an exception is possible, then accept.",
    )
    return ctx.task(
        difficulty_tags=[
            "claims",
            "refusal",
            variant,
            *(["dates"] if variant in ("late", "not-in-force") else []),
        ],
        description=f"A claim for {cause.replace('_', ' ')} is not filed: {why}.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.find(), call("get_policy", policy_id=pid)],
        wrong_actions=[holder.verify(), file],
        communicate=[told],  # the decisive fact of the refusal: window, status, coverage or deductible
        reference_reply=said,
    )


def decide_claim(ctx: ScenarioContext) -> Task:
    """Rules 7.4, 8.1, 8.2, 8.3: approve (payout = estimate - deductible) or refer to an adjuster.

    $5,000 or more, an injury or a theft goes to an adjuster (the hold), and a theft also gets a police
    report request; anything else is approved, and the agent states the payout.
    """
    scene, rng = Scene(ctx), ctx.rng
    cause = rng.choice(sorted(COVERAGE_BY_CAUSE))
    coverage = COVERAGE_BY_CAUSE[cause]
    holder = scene.holder(
        status=rng.choice(("active", "active", "grace")),
        collision=True if coverage == "collision" else None,
        comprehensive=True if coverage != "collision" else None,
    )
    deductible = holder.deductible(coverage)
    if rng.random() < 0.35:
        estimate = rng.choice((ADJUSTER_THRESHOLD_CENTS, rng.randint(5_001, 15_000) * 100))
    else:
        estimate = rng.randint(deductible // 100 + 100, 4_999) * 100 + rng.choice((0, 0, 25, 50))
    injuries = coverage == "collision" and rng.random() < 0.2
    reported = TODAY - timedelta(days=rng.randint(0, 2))
    incident = reported - timedelta(days=rng.randint(0, 12))
    vehicle = rng.choice(holder.active_vehicles)
    claim = scene.claim(
        holder,
        vehicle,
        cause=cause,
        incident=incident,
        reported=reported,
        estimate=estimate,
        injuries=injuries,
    )
    cid, pid = claim.claim_id, holder.policy_id
    refer = estimate >= ADJUSTER_THRESHOLD_CENTS or injuries or cause == "theft"
    hurt = " My passenger hurt her neck and saw a doctor." if injuries else " Nobody was hurt."
    script = [
        f"{holder.hello()} I reported claim {cid} online on {month_day_year(reported)}: {INCIDENT[cause]}. "
        "The app says it's waiting for a decision. Can you finish it and tell me what I'll get?",
        holder.identity_line() + hurt,
    ]
    user = holder.user(
        f"Get claim {cid} on policy {pid} decided and paid",
        script,
        detail="filed a claim online and wants it paid",
        known={"policy_id": pid, "claim_id": cid, "incident": INCIDENT[cause]},
        unknown=["the approval limits", "the deductible"],
        instructions="Ask for the claim to be paid. Accept an adjuster review if the agent explains it; "
        "agree to upload a police report if asked.",
    )
    head = [holder.find(), holder.verify(), call("get_claim", claim_id=cid)]
    user.script.append(
        "All right. Yes, please send it to the adjuster." if refer else "Yes, please approve it."
    )
    user.script.append(THANKS)
    if refer:
        why = (
            "theft"
            if cause == "theft"
            else "an injury"
            if injuries
            else f"an estimate of {dollars_and_cents(estimate)}"
        )
        police = (
            [call("request_claim_document", claim_id=cid, doc_type="police_report")]
            if cause == "theft"
            else []
        )
        return ctx.task(
            difficulty_tags=["claims", "adjuster", "hold", "communicate", *(["documents"] if police else [])],
            description=f"A claim with {why} goes to an adjuster"
            + (" with a police report request" if police else "")
            + "; no payout is promised.",
            user=user,
            initial_patch=scene.initial_patch(),
            gold_actions=[*head, call("refer_claim_to_adjuster", claim_id=cid), *police],
            communicate=["adjuster"],
            reference_reply=_referral(why, bool(police)),
            determined_by={"documents.doc_type": "policy 8.3: every theft claim gets a police_report request"}
            if police
            else {},
        )
    payout = estimate - claim.deductible_cents
    return ctx.task(
        difficulty_tags=["claims", "deductible", "payout", "communicate"],
        description=f"A {dollars_and_cents(estimate)} {coverage} claim is approved: "
        f"{dollars_and_cents(payout)} after the {dollars_and_cents(claim.deductible_cents)} deductible.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[*head, call("approve_claim_payout", claim_id=cid)],
        communicate=[dollars_and_cents(payout)],
        reference_reply=reply(
            f"Your claim qualifies for a payout of {dollars_and_cents(payout)}: the "
            f"{dollars_and_cents(estimate)} estimate minus your {dollars_and_cents(claim.deductible_cents)} "
            "deductible. Shall I approve it?",
            f"I can approve {dollars_and_cents(payout)} for this claim. Would you like me to go ahead?",
        ),
    )


def _referral(why: str, police: bool) -> ReferenceReply:
    """How a good agent explains sending a claim to an adjuster (and asking for a police report)."""
    report = " and ask you for a police report" if police else ""
    return reply(
        f"Because of {why}, this claim has to be reviewed by an adjuster before any payout; I can refer it "
        f"now{report}. Shall I do that?",
        "An adjuster needs to review this claim first. Would you like me to send it for review?",
    )
