"""Money-back families: delay compensation, price protection and lost parcels (reship, refund or hold)."""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import (
    ReferenceReply,
    ScenarioContext,
    call,
    conversation,
    dollars_and_cents,
    month_day,
    reply,
)
from env_server.domains.retail.families._policy import (
    APPROVAL_LIMIT_CENTS,
    DELAY_MIN_DAYS,
    DELAY_MIN_TOTAL_CENTS,
    PRICE_PROTECTION_DAYS,
    TIER,
    TODAY,
    delay_credit,
)
from env_server.domains.retail.families._scene import (
    DELAY_CREDIT,
    PRICE_REFUND,
    Scene,
    names_figure,
    order_refusal,
)
from shared.tasks import Task


def delay_compensation(ctx: ScenarioContext) -> Task:
    """A late order: store credit when the total and the delay reach the thresholds, once per order (R9)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    cheap = rng.random() < 0.3
    product = scene.product(lambda p: (p["price_cents"] < 15000) == cheap)
    quantity = rng.choice((1, 1, 2)) if cheap else 1
    lines = [scene.line(product, quantity)]
    if rng.random() < 0.3:
        lines.append(
            scene.line(scene.product(lambda p: p["id"] != product["id"] and p["price_cents"] < 20000))
        )
    late = rng.choice((0, 1, 2, 3, 3, 4, 5, 6, 8, 11))
    in_transit = rng.random() < 0.25
    if in_transit:  # not delivered yet: the delay counts up to today
        promised = TODAY - timedelta(days=late)
        order = scene.order(person, lines, status="shipped", placed_on=promised - timedelta(days=5))
        scene.ship(order, "in_transit", order.placed_on + timedelta(days=1))
        arrival = f"was promised for {month_day(promised)} and still hasn't arrived"
    else:
        placed_on = TODAY - timedelta(days=5 + late + rng.randint(1, 40))
        order = scene.order(person, lines, status="delivered", placed_on=placed_on)
        delivered_on = order.promised_date + timedelta(days=late)
        scene.ship(order, "delivered", placed_on + timedelta(days=1), delivered_on)
        arrival = (
            f"was promised for {month_day(order.promised_date)} but only arrived on {month_day(delivered_on)}"
        )
    credit = delay_credit(order.total_cents)
    already = rng.random() < 0.15
    if already:
        scene.credit(order, credit, TODAY - timedelta(days=1))
    eligible = order.total_cents >= DELAY_MIN_TOTAL_CENTS and late >= DELAY_MIN_DAYS and not already
    issue = call(
        "issue_store_credit",
        customer_id=person.id,
        amount_cents=credit,
        reason="delay_compensation",
        order_id=order.id,
    )
    fields = {
        "user": person.user(
            goal=f"Get compensation for the late delivery of order {order.id}.",
            known={"order_id": order.id},
            unknown=["the compensation rules", "the compensation amount"],
            instructions="Store credit is fine. If told there is no compensation, accept the explanation.",
            script=conversation(
                f"Hi, my order {order.id} {arrival}. Do I get any compensation for that?",
                identity=person.identity_line(),
                yes="Okay, thanks." if not eligible else "Yes, store credit works, thank you.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if eligible:
        return ctx.task(
            difficulty_tags=["delay-compensation", "store-credit", "communicate", "generated"],
            description=f"A {dollars_and_cents(order.total_cents)} order {late} days late: "
            f"{dollars_and_cents(credit)} credit.",
            gold_actions=[person.verify(), issue],
            communicate=[dollars_and_cents(credit)],
            reference_reply=reply(
                f"Your order qualifies for late-delivery compensation of {dollars_and_cents(credit)} in "
                "store credit. Shall I add it to your account?",
                f"I can give you {dollars_and_cents(credit)} as store credit for the delay. Would you like "
                "that?",
            ),
            determined_by=DELAY_CREDIT,
            **fields,
        )
    # The decisive fact: the credit already given, the minimum total, or the minimum delay.
    tell = (
        dollars_and_cents(credit)
        if already
        else dollars_and_cents(DELAY_MIN_TOTAL_CENTS)
        if order.total_cents < DELAY_MIN_TOTAL_CENTS
        else str(DELAY_MIN_DAYS)
    )
    why = (
        "already compensated"
        if already
        else f"total under {dollars_and_cents(DELAY_MIN_TOTAL_CENTS)}"
        if order.total_cents < DELAY_MIN_TOTAL_CENTS
        else f"only {late} day(s) late"
    )
    return ctx.task(
        description=f"Late-delivery compensation asked for a {dollars_and_cents(order.total_cents)} "
        f"order: none, {why}.",
        **order_refusal(
            person, order, issue, "delay-compensation", tell, _no_delay_credit(tell, order.id, late)
        ),
        **fields,
    )


def price_protection(ctx: ScenarioContext) -> Task:
    """A price drop after delivery: Gold and Platinum get it back within 14 days, once per line (R10, R7)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer(extra_method=rng.random() < 0.5)
    product = scene.product(
        lambda p: p["price_cents"] >= 5000 and not names_figure(p["name"], PRICE_PROTECTION_DAYS)
    )
    quantity = rng.choice((1, 1, 2)) if product["price_cents"] < 15000 else 1
    drop = rng.choice(
        [d for d in (500, 1000, 2000, 2500, 5000, 10000, 15000) if d <= product["price_cents"] // 2]
    )
    line = scene.line(product, quantity, markup=drop)
    since = rng.choice((1, 3, 5, 7, 9, 11, 13, 14, 14, 15, 16, 20, 25))
    order = scene.delivered(
        person, [line], TODAY - timedelta(days=since), method=rng.randrange(len(person.methods))
    )
    amount = drop * quantity
    already = rng.random() < 0.1
    if already:
        scene.refund(order, amount, "price_adjustment", TODAY - timedelta(days=1), item_id=line.id)
    covered = TIER[person.tier].price_protection
    eligible = covered and since <= PRICE_PROTECTION_DAYS and not already
    others = [
        label for m, label in zip(person.methods, person.labels, strict=True) if m != order.payment_method_id
    ]
    ask = f" Could you send it to my {others[0]}?" if others and rng.random() < 0.5 else ""
    refund = call(
        "issue_refund",
        order_id=order.id,
        amount_cents=amount,
        payment_method_id=order.payment_method_id,
        reason="price_adjustment",
        order_item_id=line.id,
    )
    paid = f"{dollars_and_cents(line.unit_price_cents)}" + (" each" if quantity > 1 else "")
    fields = {
        "user": person.user(
            goal=f"Get the price difference on the {product['name']} from order {order.id}.",
            known={"order_id": order.id, "price_paid_cents": line.unit_price_cents},
            unknown=["whether their tier has price protection"],
            instructions="If told the refund must go to the original payment method, accept. "
            "If told there is no price protection, accept.",
            script=conversation(
                f"Hi, I bought the {product['name']} for {paid} (order {order.id}) and now it's "
                f"{dollars_and_cents(product['price_cents'])} on your site. Can I get the difference "
                f"back?{ask}",
                identity=person.identity_line(),
                yes="Yes, alright, please go ahead. Thanks." if eligible else "Alright, thanks.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if eligible:
        told = rng.random() < 0.5
        return ctx.task(
            difficulty_tags=["price-protection", "refund", "communicate", "generated"],
            description=f"{TIER[person.tier].name} price protection {since} days after delivery: "
            f"refund {dollars_and_cents(amount)} to the original payment method.",
            gold_actions=[
                person.verify(),
                refund,
            ],
            communicate=[dollars_and_cents(amount)] if told else [],
            reference_reply=reply(
                f"Your {TIER[person.tier].name} membership includes price protection: I can refund the "
                f"difference of {dollars_and_cents(amount)} to your original payment method. Shall I go "
                "ahead?",
                f"You're eligible for {dollars_and_cents(amount)} back on the original payment method. Would "
                "you like me to process it?",
            )
            if told
            else None,
            determined_by=PRICE_REFUND,
            **fields,
        )
    # The decisive fact: the adjustment already made, the tier, or the 14-day limit.
    tell = (
        dollars_and_cents(amount)
        if already
        else TIER[person.tier].name
        if not covered
        else str(PRICE_PROTECTION_DAYS)
    )
    why = (
        "already adjusted"
        if already
        else f"{TIER[person.tier].name} has no price protection"
        if not covered
        else f"{since} days after delivery"
    )
    return ctx.task(
        description=f"Price difference of {dollars_and_cents(amount)} asked: refuse, {why}.",
        **order_refusal(person, order, refund, "price-protection", tell, _no_price_refund(tell, since)),
        **fields,
    )


def _no_delay_credit(tell: str, order_id: str, late: int) -> ReferenceReply:
    """How a good agent refuses delay compensation, its decisive fact (`tell`) first."""
    if tell == str(DELAY_MIN_DAYS):
        days = f"{late} day{'s' if late != 1 else ''}"
        return reply(
            f"Compensation starts at {DELAY_MIN_DAYS} days late, and your order was {days} late, so it "
            "doesn't qualify.",
            f"Late deliveries qualify only from {DELAY_MIN_DAYS} days late; yours was under that, I'm sorry.",
        )
    if tell == dollars_and_cents(DELAY_MIN_TOTAL_CENTS):
        return reply(
            f"Delay compensation applies only to orders of {tell} or more, and this order is below that, so "
            "there's no credit.",
            f"Orders under {tell} aren't eligible for late-delivery credit, I'm afraid.",
        )
    return reply(
        f"Order {order_id} already received {tell} in delay compensation, so I can't issue another credit.",
        f"You were already credited {tell} for this delay; it can only be compensated once.",
    )


def _no_price_refund(tell: str, since: int) -> ReferenceReply:
    """How a good agent refuses a price-drop refund, its decisive fact (`tell`) first."""
    if tell == str(PRICE_PROTECTION_DAYS):
        return reply(
            f"Price drops are refunded only within {tell} days of delivery, and your order was delivered "
            f"{since} days ago, so I can't refund the difference.",
            f"The price-protection window is {tell} days after delivery, and it has passed.",
        )
    if tell.startswith("$"):
        return reply(
            f"This line already got its price adjustment of {tell}, and a line can be adjusted only once.",
            f"You were already refunded {tell} for this price drop, so there's nothing more to refund.",
        )
    return reply(
        f"You're a {tell} member, and price protection is only for Gold and Platinum members, so I can't "
        "refund the difference.",
        f"Your {tell} membership doesn't include price protection, I'm sorry.",
    )


def lost_parcel(ctx: ScenarioContext) -> Task:
    """A lost parcel: reship if in stock, else refund the unrefunded rest, held above $1,000 (R13, R8, R7)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer(extra_method=rng.random() < 0.5)
    first = scene.product()
    lines = [scene.line(first, rng.choice((1, 2)) if first["price_cents"] < 10000 else 1)]
    if rng.random() < 0.35:
        lines.append(scene.line(scene.product(lambda p: p["id"] != first["id"])))
    placed_on = TODAY - timedelta(days=rng.randint(6, 30))
    order = scene.order(
        person, lines, status="shipped", placed_on=placed_on, method=rng.randrange(len(person.methods))
    )
    scene.ship(order, "lost", placed_on + timedelta(days=1))
    in_stock = rng.random() < 0.45
    short = rng.randrange(len(lines))
    for i, line in enumerate(lines):
        available = rng.randint(line.quantity, line.quantity + 12) if in_stock or i != short else 0
        scene.stock(line.product["id"], order.warehouse, available=available)
    earlier = 0
    if rng.random() < 0.15 and order.total_cents > 5000:
        earlier = rng.choice((1000, 2000, 2500))
        scene.refund(order, earlier, "billing_error", placed_on + timedelta(days=1))
    amount = order.total_cents - earlier
    others = [
        label for m, label in zip(person.methods, person.labels, strict=True) if m != order.payment_method_id
    ]
    wish = f" Please put it on my {others[0]}." if others and rng.random() < 0.5 else ""
    if in_stock:
        final = call("reship_order", order_id=order.id)
        outcome = "in stock, so the order is reshipped"
        determined: dict[str, str] = {}
    elif amount > APPROVAL_LIMIT_CENTS:
        final = call(
            "create_approval_request",
            order_id=order.id,
            kind="refund",
            amount_cents=amount,
            summary=f"Lost parcel, not in stock in {order.warehouse}; refund "
            f"{dollars_and_cents(amount)} needs approval.",
        )
        outcome = f"out of stock and {dollars_and_cents(amount)} is above $1,000, so an approval request"
        determined = {
            "approval_requests.kind": "policy 8 + 13: the lost-parcel refund above $1,000 is held as a "
            "request of kind refund"
        }
    else:
        final = call(
            "issue_refund",
            order_id=order.id,
            amount_cents=amount,
            payment_method_id=order.payment_method_id,
            reason="lost_package",
        )
        outcome = f"out of stock, so {dollars_and_cents(amount)} is refunded to the original payment"
        determined = {
            "refunds.reason": "policy 13: a lost parcel that cannot be reshipped is refunded with reason "
            "lost_package"
        }
    return ctx.task(
        difficulty_tags=["lost-parcel", "reship" if in_stock else "refund", "generated"],
        description=f"The carrier lost order {order.id}: {outcome}.",
        user=person.user(
            goal=f"Sort out lost order {order.id}: a replacement or the money back.",
            known={"order_id": order.id},
            unknown=["stock levels", "the approval limit"],
            instructions="You would prefer your money back but accept a replacement parcel or a supervisor "
            "hold if the agent explains the policy.",
            script=conversation(
                f"Hi, the carrier says my parcel for order {order.id} is lost. I'd like my money back.{wish}",
                identity=person.identity_line(),
                yes="Fine, yes, go ahead with what you can do.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[person.verify(), final],
        determined_by=determined,
    )
