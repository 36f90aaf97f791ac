"""Multi-step and coverage families: swapping a vehicle (3+ writes) and changing a deductible."""

from __future__ import annotations

from datetime import date, timedelta

from env_server.domain import (
    GoldAction,
    ScenarioContext,
    call,
    dollars_and_cents,
    month_day_year,
    refusal,
    reply,
    whole_dollars,
)
from env_server.domains.insurance.factories import ClaimSpec, VehicleSpec
from env_server.domains.insurance.families._common import (
    COVERAGE_BY_CAUSE,
    ID_CARDS_SETTLED,
    THANKS,
    TODAY,
    add_vehicle,
    car,
    car_settled,
    describe_car,
    driver_settled,
    id_cards,
)
from env_server.domains.insurance.families._holder import Holder
from env_server.domains.insurance.families._scene import Scene
from env_server.domains.insurance.models import DEDUCTIBLE_OPTIONS_CENTS
from shared.tasks import Task


def _undecided_claim(
    scene: Scene, holder: Holder, status: str, vehicle: VehicleSpec | None = None
) -> ClaimSpec:
    """A recent claim on `vehicle` (one of `holder`'s by default) that is still being decided."""
    rng = scene.rng
    causes = [c for c, cov in COVERAGE_BY_CAUSE.items() if cov != "glass" and holder.has(cov)]
    incident = TODAY - timedelta(days=rng.randint(2, 20))
    cause = rng.choice(causes)
    deductible = holder.deductible(COVERAGE_BY_CAUSE[cause])
    return scene.claim(
        holder,
        vehicle or rng.choice(holder.active_vehicles),
        cause=cause,
        incident=incident,
        reported=incident + timedelta(days=1),
        estimate=deductible + rng.randint(200, 3000) * 100,
        status=status,
    )


def vehicle_swap(ctx: ScenarioContext) -> Task:
    """Rules 5.4, 5.5 and 3.x: replace a traded-in vehicle (add, remove, ID cards), sometimes add a driver.

    When the old vehicle has an undecided claim it stays on the policy (rule 5.4): the new one is added and
    ID cards sent; removing the old one is the mistake the state check catches.
    """
    scene, rng = Scene(ctx), ctx.rng
    variant = rng.choices(("swap", "swap+driver", "claim-blocks"), weights=(50, 30, 20))[0]
    household = 0 if variant == "swap+driver" else rng.randint(0, 1)
    holder = scene.holder(
        status="active",
        vehicles=rng.randint(1, 3),
        household=household,
        collision=True if variant == "claim-blocks" else None,  # the blocking claim needs a coverage
    )
    pid = holder.policy_id
    old = rng.choice(holder.active_vehicles)
    new = scene.vehicle(holder.policy, new=True)
    remove = call("remove_vehicle", policy_id=pid, vehicle_id=old.vehicle_id)
    extra: list[GoldAction] = []
    driver_line = ""
    settled = car_settled(new) | ID_CARDS_SETTLED
    if variant == "claim-blocks":
        _undecided_claim(scene, holder, rng.choice(("open", "adjuster_review")), old)
    elif variant == "swap+driver":
        args = scene.newcomer(holder, relationship="child" if holder.age >= 42 else "spouse")
        extra = [call("add_driver", **args)]
        settled |= driver_settled(args, f"my {args['relationship']} {args['first_name']} will drive it")
        driver_line = (
            f" Also, my {args['relationship']} {args['first_name']} {args['last_name']} will drive it: born "
            f"{month_day_year(date.fromisoformat(args['date_of_birth']))}, licence {args['license_number']} "
            f"({args['license_state']}); please add them as a driver."
        )
    user = holder.user(
        f"Replace the {car(old)} with the new {car(new)} on policy {pid}"
        + (" and add a young driver" if extra else ""),
        [
            f"{holder.hello()} I traded in my {car(old)} today for a new car and need to switch the "
            f"insurance on policy {pid}.",
            f"{holder.identity_line()} {describe_car(new)}{driver_line}",
            "Yes, that's all correct, please go ahead.",
            THANKS,
        ],
        detail="just traded in a car",
        known={"policy_id": pid, "new_vehicle": describe_car(new), "old_vehicle": car(old)},
        unknown=["vehicle ids", "the new premium"],
        instructions="Give the details when asked and confirm the changes. Accept ID cards by email. If "
        "the agent says the old car cannot come off yet, accept that.",
    )
    head = [holder.find(), holder.verify(), call("get_policy", policy_id=pid)]
    if variant == "claim-blocks":
        return ctx.task(
            difficulty_tags=["vehicles", "claims", "multi-step", "documents", "partial-refusal"],
            description="The traded-in vehicle has an undecided claim: add the new one and send ID cards, "
            "but the old one stays until the claim is decided.",
            user=user,
            initial_patch=scene.initial_patch(),
            gold_actions=[*head, add_vehicle(new), id_cards(pid)],
            determined_by=settled,
        )
    return ctx.task(
        difficulty_tags=["vehicles", "multi-step", "documents", *(["drivers"] if extra else [])],
        description="Swap a traded-in vehicle for a new one (add, then remove)"
        + (", add a young driver" if extra else "")
        + ", then email new ID cards once.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[*head, add_vehicle(new), remove, *extra, id_cards(pid)],
        determined_by=settled,
    )


def deductible_change(ctx: ScenarioContext) -> Task:
    """Rules 6.1, 6.2, 2.2: raise any time; lower only without an undecided claim; never on a lapsed policy.

    The customer asks for the new premium, which the agent must state (the rating table's figure).
    """
    scene, rng = Scene(ctx), ctx.rng
    status = rng.choices(("active", "grace", "lapsed"), weights=(65, 20, 15))[0]
    holder = scene.holder(status=status, collision=True, comprehensive=True)
    pid = holder.policy_id
    coverage = rng.choice(("collision", "comprehensive"))
    column = f"{coverage}_deductible_cents"
    current = getattr(holder.policy, column)
    target = rng.choice([d for d in DEDUCTIBLE_OPTIONS_CENTS if d != current])
    lowering = target < current
    claim: ClaimSpec | None = None
    if rng.random() < (0.5 if lowering else 0.25):
        claim = _undecided_claim(scene, holder, rng.choice(("open", "adjuster_review")))
    refused = status == "lapsed" or (lowering and claim is not None)
    premium = holder.premium_with(**{column: target})
    reason = "lower my out-of-pocket costs" if lowering else "bring my premium down"
    user = holder.user(
        f"Change the {coverage} deductible on policy {pid} to {whole_dollars(target)}",
        [
            f"{holder.hello()} I'd like to change the {coverage} deductible on policy {pid} to "
            f"{whole_dollars(target)} to {reason}. What would my monthly premium be?",
            holder.identity_line(),
            *(["I understand, leave it then."] if refused else [f"Yes, {coverage} only, go ahead.", THANKS]),
        ],
        detail="reviewing the policy's coverages",
        known={"policy_id": pid},
        unknown=["the current deductibles", "the new premium", "the rules on deductible changes"],
        instructions=f"Ask for a {whole_dollars(target)} {coverage} deductible and to be told the new "
        "monthly premium. Confirm when asked. If the agent refuses, accept it.",
    )
    change = call("change_deductible", policy_id=pid, coverage=coverage, deductible_cents=target)
    reads = [holder.find(), call("get_policy", policy_id=pid), call("list_claims", policy_id=pid)]
    if refused:
        lapsed = status == "lapsed"
        return ctx.task(
            difficulty_tags=["coverage", "deductible", "refusal", "policy-status" if lapsed else "claims"],
            description=f"The {coverage} deductible change is refused: "
            + ("the policy is lapsed." if lapsed else "it lowers the deductible while a claim is undecided."),
            user=user,
            initial_patch=scene.initial_patch(),
            **refusal(
                "lapsed" if lapsed or claim is None else claim.status.split("_")[0],
                reply(
                    "Your policy is lapsed, so its deductibles can't be changed.",
                    "A lapsed policy can't have its coverage changed, I'm sorry.",
                )
                if lapsed or claim is None
                else reply(
                    "There is a claim on your policy that is still "
                    + ("open" if claim.status == "open" else "under adjuster review")
                    + ", and a deductible can't be lowered until it is decided.",
                    "Lowering a deductible has to wait while a claim is still "
                    + ("open." if claim.status == "open" else "with an adjuster for review."),
                ),
                reads=reads,
                wrong=[holder.verify(), change],
            ),
            # The decisive fact: the lapse (rule 2.2), else the status of the claim that blocks a lower
            # deductible (6.2): "open", or "adjuster" for a claim in adjuster_review.
        )
    return ctx.task(
        difficulty_tags=["coverage", "deductible", "communicate", *(["claims"] if claim else [])],
        description=f"{'Lower' if lowering else 'Raise'} the {coverage} deductible to {whole_dollars(target)}"
        + (" (an undecided claim does not block a raise)" if claim else "")
        + f"; the new premium is {dollars_and_cents(premium)}.",
        user=user,
        initial_patch=scene.initial_patch(),
        gold_actions=[reads[0], holder.verify(), *reads[1:], change],
        communicate=[dollars_and_cents(premium)],
        reference_reply=reply(
            f"With a {whole_dollars(target)} {coverage} deductible your monthly premium would be "
            f"{dollars_and_cents(premium)}. Shall I make the change?",
            f"The new premium would come to {dollars_and_cents(premium)} a month. Would you like me to go "
            "ahead?",
        ),
        determined_by={
            **{
                f"policies.{c}_deductible_cents": f"user: asks to change the {coverage} deductible only"
                for c in ("collision", "comprehensive")
            },
            # The premiums follow from the deductibles through the rating table.
            "policies.monthly_premium_cents": f"rating: follows from the new {coverage} deductible",
            "vehicles.monthly_premium_cents": f"rating: follows from the new {coverage} deductible",
        },
    )
