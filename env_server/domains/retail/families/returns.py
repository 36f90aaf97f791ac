"""Return families: the fee by tier and reason, the return window and final sale, the approval limit."""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import (
    GoldAction,
    ScenarioContext,
    call,
    conversation,
    dollars_and_cents,
    month_day,
    reply,
)
from env_server.domains.retail.catalog import RETURN_FEE_CENTS
from env_server.domains.retail.families._policy import APPROVAL_LIMIT_CENTS, TIER, TODAY, fee_waived
from env_server.domains.retail.families._scene import (
    RETURN_HOLD,
    RETURN_REASON_TEXT,
    RETURN_RULE,
    Line,
    Person,
    PlacedOrder,
    Scene,
    names_figure,
    order_refusal,
    return_terms,
    said_reason,
)
from shared.tasks import Task


def _create_return(order: PlacedOrder, line: Line, quantity: int, reason: str, waived: bool) -> GoldAction:
    return call(
        "create_return",
        order_id=order.id,
        order_item_id=line.id,
        quantity=quantity,
        reason=reason,
        waive_return_fee=waived,
        refund_payment_method_id=order.payment_method_id,
    )


def _units(line: Line, quantity: int) -> str:
    name = line.product["name"]
    if line.quantity == 1:
        return f"the {name}"
    if quantity == line.quantity:
        return f"{'both' if quantity == 2 else f'all {quantity}'} {name} units"
    return f"{'one' if quantity == 1 else quantity} of the {line.quantity} {name} units"


def _other_method_request(scene: Scene, person: Person, order: PlacedOrder) -> tuple[str, str]:
    """Sometimes the customer asks for the refund elsewhere (rule 7): the script sentence and instruction."""
    others = [
        label for m, label in zip(person.methods, person.labels, strict=True) if m != order.payment_method_id
    ]
    if not others or scene.rng.random() < 0.5:
        return "", ""
    return (
        f" Could the refund go to my {others[0]} instead?",
        f"Ask for the refund to go to your {others[0]}; accept if told it must go to the original payment.",
    )


def return_fee(ctx: ScenarioContext) -> Task:
    """A return inside the window: the fee depends on reason and tier; the refund goes back (R5-R7)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer(extra_method=rng.random() < 0.5)
    product = scene.product(lambda p: not p["final_sale"] and p["price_cents"] <= 80000)
    quantity = rng.choice((1, 2, 3)) if product["price_cents"] < 10000 else 1
    line = scene.line(
        product, quantity, markup=rng.choice((0, 0, 1000)) if product["price_cents"] > 20000 else 0
    )
    lines = [line]
    if rng.random() < 0.4:
        lines.append(scene.line(scene.product(lambda p: p["id"] != product["id"])))
    delivered_on = TODAY - timedelta(days=rng.randint(1, TIER[person.tier].return_window_days))
    order = scene.delivered(person, lines, delivered_on, method=rng.randrange(len(person.methods)))
    returned = rng.randint(1, quantity)
    reason = rng.choices(tuple(RETURN_REASON_TEXT), weights=(6, 2, 1, 1, 1))[0]
    waived, refund = return_terms(person, line, returned, reason)
    said = rng.choice(RETURN_REASON_TEXT[reason])
    ask, instruction = _other_method_request(scene, person, order)
    tell = rng.random() < 0.5
    return ctx.task(
        difficulty_tags=["return", "fee-waiver" if waived else "fee-charged", "generated"],
        description=f"{TIER[person.tier].name} member returns {_units(line, returned)} ({reason}): fee "
        f"{'waived' if waived else 'charged'}, refund {dollars_and_cents(refund)} to the original payment.",
        user=person.user(
            goal=f"Return {_units(line, returned)} from order {order.id}.",
            known={"order_id": order.id},
            unknown=["the refund amount", "whether a return fee applies"],
            instructions=" ".join(
                filter(
                    None,
                    [
                        f"Reason: {said}.",
                        instruction,
                        "Accept the return as offered.",
                    ],
                )
            ),
            script=conversation(
                f"Hi, I'd like to return {_units(line, returned)} from order {order.id} - {said}.{ask}",
                identity=person.identity_line(),
                yes="Yes, please go ahead.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[
            person.verify(),
            _create_return(order, line, returned, reason, waived),
        ],
        communicate=[dollars_and_cents(refund)] if tell else [],
        reference_reply=reply(
            f"I can process the return: your refund comes to {dollars_and_cents(refund)}"
            + ("" if waived else f" after the {dollars_and_cents(RETURN_FEE_CENTS)} return fee")
            + ", to your original payment method. Shall I go ahead?",
            f"You'd get {dollars_and_cents(refund)} back on the original payment method. Do you want me to "
            "process the return?",
        )
        if tell
        else None,
        determined_by=said_reason("returns.reason", RETURN_RULE, said, reason),
    )


def return_window(ctx: ScenarioContext) -> Task:
    """Outside the tier's window or final sale: refuse; on the window's last day: accept (R5)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    window = TIER[person.tier].return_window_days
    variant = rng.choices(("late", "final-sale", "last-day"), weights=(5, 3, 2))[0]
    final_sale = variant == "final-sale"
    product = scene.product(
        lambda p: (
            bool(p["final_sale"]) == final_sale
            and p["price_cents"] <= 95000
            and not names_figure(p["name"], window)
        )
    )
    quantity = rng.choice((1, 2)) if product["price_cents"] < 10000 else 1
    line = scene.line(product, quantity)
    since = {"late": window + rng.randint(1, 40), "final-sale": rng.randint(1, window), "last-day": window}[
        variant
    ]
    delivered_on = TODAY - timedelta(days=since)
    order = scene.delivered(person, [line], delivered_on)
    reason = rng.choice(("changed_mind", "not_as_described"))
    waived, refund = return_terms(person, line, quantity, reason)
    said = rng.choice(RETURN_REASON_TEXT[reason])
    create = _create_return(order, line, quantity, reason, waived)
    fields = {
        "user": person.user(
            goal=f"Return {_units(line, quantity)} from order {order.id}.",
            known={"order_id": order.id, "delivered_on": delivered_on.isoformat()},
            unknown=["the return window of their tier"],
            instructions=f"Reason: {said}. If refused, ask once whether an "
            "exception is possible, then accept.",
            script=conversation(
                f"Hello, order {order.id} was delivered on {month_day(delivered_on)} and I'd like to return "
                f"{_units(line, quantity)}. {said.capitalize()}.",
                identity=person.identity_line(),
                yes="Is there really nothing you can do?"
                if variant != "last-day"
                else "Great, yes, please do it.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if variant == "last-day":
        return ctx.task(
            difficulty_tags=["return", "return-window", "boundary", "generated"],
            description=f"Return on day {since} after delivery, the last day of the {window}-day "
            f"{TIER[person.tier].name} window: accepted, refund {dollars_and_cents(refund)}.",
            gold_actions=[person.verify(), create],
            determined_by=said_reason("returns.reason", RETURN_RULE, said, reason),
            **fields,
        )
    why = "the item is final sale" if final_sale else f"day {since} is past the {window}-day window"
    return ctx.task(
        description=f"{TIER[person.tier].name} member asks to return {product['name']}: refuse, {why}.",
        **order_refusal(
            person,
            order,
            create,
            "return-window" if not final_sale else "final-sale",
            "final-sale" if final_sale else str(window),
            reply(
                f"I'm sorry, the {product['name']} was sold as final-sale, so it can't be returned.",
                "Final-sale items like this one aren't returnable, whatever the reason.",
            )
            if final_sale
            else reply(
                f"Returns are accepted within {window} days of delivery for {TIER[person.tier].name} "
                f"members, and your order arrived {since} days ago, so I can't take it back.",
                f"Your {window}-day return window has closed, so this return isn't possible.",
            ),
        ),
        **fields,
    )


def return_approval(ctx: ScenarioContext) -> Task:
    """A high-value return: a refund above $1,000 waits for a supervisor, up to $1,000 it is created (R8)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    product = scene.product(lambda p: not p["final_sale"] and p["price_cents"] >= 30000)
    reason = rng.choices(("changed_mind", "defective", "not_as_described"), weights=(3, 1, 1))[0]
    quantity, unit = 1, product["price_cents"] + rng.choice((0, 0, 1000, 2000))
    if rng.random() < 0.3:  # right at the limit: a refund of exactly $1,000.00 needs no approval
        fee = 0 if fee_waived(person.tier, reason) else RETURN_FEE_CENTS
        unit = APPROVAL_LIMIT_CENTS + fee + rng.choice((0, 0, 1, 100))
    elif unit < 60000 and rng.random() < 0.6:
        quantity = 2
    line = scene.line(product, quantity, markup=unit - product["price_cents"])
    since = rng.randint(1, TIER[person.tier].return_window_days)
    order = scene.delivered(person, [line], TODAY - timedelta(days=since))
    waived, refund = return_terms(person, line, quantity, reason)
    hold = refund > APPROVAL_LIMIT_CENTS
    said = rng.choice(RETURN_REASON_TEXT[reason])
    tell = hold and rng.random() < 0.5
    what = _units(line, quantity)
    if hold:
        final = call(
            "create_approval_request",
            order_id=order.id,
            kind="return",
            amount_cents=refund,
            summary=f"Return of {what} ({reason}); refund {dollars_and_cents(refund)} is above the "
            f"$1,000 limit.",
            order_item_id=line.id,
        )
    else:
        final = _create_return(order, line, quantity, reason, waived)
    return ctx.task(
        difficulty_tags=["return", "approval" if hold else "approval-limit", "generated"],
        description=f"Return of {what} with a refund of {dollars_and_cents(refund)}: "
        + ("above $1,000, so a supervisor approval request." if hold else "not above $1,000, so the return."),
        user=person.user(
            goal=f"Return {what} from order {order.id} and get the money back.",
            known={"order_id": order.id},
            unknown=["that refunds above $1,000 need supervisor approval"],
            instructions=f"Reason: {said}. Accept a supervisor hold if it is explained.",
            script=conversation(
                f"Hi, I want to return {what} from order {order.id}: {said}.",
                identity=person.identity_line(),
                yes="Okay, yes, please go ahead.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[person.verify(), final],
        determined_by=RETURN_HOLD if hold else said_reason("returns.reason", RETURN_RULE, said, reason),
        communicate=["supervisor"] if tell else [],
        reference_reply=reply(
            f"A refund of {dollars_and_cents(refund)} is above our $1,000 limit, so it needs a supervisor's "
            "approval: I can submit the return for approval now. Shall I do that?",
            "Refunds this large go to a supervisor for approval first. Would you like me to submit it?",
        )
        if tell
        else None,
    )
