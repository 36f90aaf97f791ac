"""The warranty family: coverage end dates, accidental damage, repair or replacement, or a return."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from env_server.domain import ScenarioContext, call, conversation, month_day_year, patch_rows, refusal, reply
from env_server.domains.retail.factories import WarrantyClaimSpec
from env_server.domains.retail.families._policy import TIER, TODAY, days_since
from env_server.domains.retail.families._scene import Scene, said_reason
from env_server.domains.retail.tools.warranty import PROTECTION_PLAN_MONTHS, add_months
from shared.tasks import Task

#: How customers describe each kind of fault.
ISSUE_TEXT: dict[str, tuple[str, ...]] = {
    "defect": (
        "it suddenly stopped turning on",
        "the screen flickers constantly",
        "it keeps rebooting by itself",
    ),
    "battery": ("the battery now dies within an hour", "the battery swelled up and won't charge"),
    "accidental_damage": ("I dropped it and the screen cracked", "I spilled coffee on it and now it's dead"),
}


def warranty_claim(ctx: ScenarioContext) -> Task:
    """A fault after delivery: a claim if covered, else a refusal; a return inside the window (R5, R11, R12).

    The claim asks for a replacement after two completed claims, otherwise a repair.
    """
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    window = TIER[person.tier].return_window_days
    issue = rng.choices(tuple(ISSUE_TEXT), weights=(5, 2, 3))[0]
    within_window = issue != "accidental_damage" and rng.random() < 0.15
    product = scene.product(
        lambda p: (
            p["warranty_months"] > 0
            and (not within_window or (not p["final_sale"] and p["price_cents"] <= 90000))
        )
    )
    plan = product["price_cents"] >= 20000 and rng.random() < 0.4
    months = product["warranty_months"] + TIER[person.tier].warranty_extension_months
    months += PROTECTION_PLAN_MONTHS if plan else 0
    if within_window:
        delivered_on = TODAY - timedelta(days=rng.randint(1, window))
    elif rng.random() < 0.4:  # coverage ends within about two weeks of today, either side
        delivered_on = add_months(TODAY + timedelta(days=rng.randint(-15, 15)), -months)
    else:
        delivered_on = TODAY - timedelta(days=rng.randint(window + 1, 3 * 365))
    if not within_window and days_since(delivered_on) <= window:
        delivered_on = TODAY - timedelta(days=window + rng.randint(1, 60))
    ends = add_months(delivered_on, months)
    line = scene.line(product, plan=plan)
    order = scene.delivered(person, [line], delivered_on)
    completed = 0
    for _ in range(rng.choices((0, 1, 2, 3), weights=(5, 2, 2, 1))[0] if not within_window else 0):
        status = rng.choice(("completed", "completed", "denied"))
        completed += status == "completed"
        earlier = WarrantyClaimSpec(
            id=ctx.new_id("WC"),
            order_item_id=line.id,
            customer_id=person.id,
            issue_type="defect",
            resolution="repair",
            status=status,
            description="Earlier fault, handled by the repair centre.",
            created_at=datetime.combine(
                delivered_on + timedelta(days=rng.randint(1, max(1, days_since(delivered_on) - 1))), time(10)
            ),
        )
        scene.add(patch_rows(earlier))
    fault = rng.choice(ISSUE_TEXT[issue])
    resolution = "replacement" if completed >= 2 else "repair"
    covered = ends >= TODAY and (issue != "accidental_damage" or plan)
    claim = call(
        "file_warranty_claim",
        order_item_id=line.id,
        issue_type=issue,
        resolution=resolution,
        description=f"Customer reports: {fault}.",
    )
    fields = {
        "user": person.user(
            goal=f"Get the {product['name']} from order {order.id} fixed or replaced.",
            known={
                "order_id": order.id,
                "delivered_on": delivered_on.isoformat(),
                "earlier_claims": completed,
            },
            unknown=["the warranty end date"],
            instructions=f"The problem: {fault}. Be honest about how it happened. Accept what is offered.",
            script=conversation(
                f"Hi, my {product['name']} from order {order.id} has a problem: {fault}. Is it covered?",
                identity=person.identity_line(),
                yes="Okay, yes, please go ahead." if covered or within_window else "I see. Thanks anyway.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if within_window:
        return ctx.task(
            difficulty_tags=["warranty", "return", "return-window", "generated"],
            description=f"A faulty {product['name']} {days_since(delivered_on)} days after delivery: inside "
            f"the {window}-day return window, so a defective return (no fee) instead of a claim.",
            gold_actions=[
                person.verify(),
                call(
                    "create_return",
                    order_id=order.id,
                    order_item_id=line.id,
                    quantity=1,
                    reason="defective",
                    waive_return_fee=True,
                    refund_payment_method_id=order.payment_method_id,
                ),
            ],
            determined_by={
                "returns.reason": "policy 11: a defective item inside its return window is returned with "
                "reason defective"
            },
            **fields,
        )
    if covered:
        return ctx.task(
            difficulty_tags=["warranty", resolution, "generated"] + (["protection-plan"] if plan else []),
            description=f"{issue} on a {product['name']} covered until {ends.isoformat()}: "
            f"{resolution} ({completed} completed claims before).",
            gold_actions=[person.verify(), call("check_warranty", order_item_id=line.id), claim],
            determined_by={
                **said_reason("warranty_claims.issue_type", "policy 11: the kind of fault", fault, issue),
                "warranty_claims.resolution": f"policy 12: {completed} completed warranty claims before, "
                f"so a {resolution}",
            },
            **fields,
        )
    why = (
        "accidental damage without a protection plan"
        if ends >= TODAY
        else f"coverage ended {ends.isoformat()}"
    )
    return ctx.task(
        difficulty_tags=["refusal", "warranty", "generated"],
        description=f"{issue} on a {product['name']}: refuse the claim, {why}.",
        **refusal(
            "accidental" if ends >= TODAY else ends.isoformat(),
            reply(
                "Accidental damage isn't covered by the warranty, and there's no protection plan "
                "on this item, "
                "so I can't open a claim.",
                "The damage counts as accidental, which the warranty excludes without a protection plan.",
            )
            if ends >= TODAY
            else reply(
                f"The warranty on your {product['name']} ended on {month_day_year(ends)}, so I can't open a "
                "claim for it.",
                f"Its coverage ran out on {ends.isoformat()}, so this fault isn't covered any more.",
            ),
            reads=[call("check_warranty", order_item_id=line.id)],
            wrong=[person.verify(), claim],
        ),
        # The decisive fact: accidental damage needs a protection plan, or the date coverage ended.
        **fields,
    )
