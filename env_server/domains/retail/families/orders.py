"""Order families: cancellation, address changes, promo codes and multi-step conversations.

The address family also covers identity retries (rule 1) and callers who are not the account holder (rule 2).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from env_server.domain import (
    GoldAction,
    ReferenceReply,
    ScenarioContext,
    call,
    conversation,
    dollars_and_cents,
    month_day_year,
    refusal,
    reply,
    user_spec,
)
from env_server.domains.retail.families._policy import (
    DELAY_MIN_TOTAL_CENTS,
    PROMO_MAX_AGE_DAYS,
    TIER,
    TODAY,
    delay_credit,
)
from env_server.domains.retail.families._scene import (
    DELAY_CREDIT,
    RETURN_REASON_TEXT,
    RETURN_RULE,
    Person,
    PlacedOrder,
    Scene,
    order_refusal,
    return_terms,
    said_reason,
)
from shared.tasks import Task

#: How customers say each cancellation reason (rule 3 wants the matching code).
CANCEL_TEXT: dict[str, tuple[str, ...]] = {
    "no_longer_needed": ("I don't need it anymore", "it turns out I won't need it after all"),
    "ordered_by_mistake": ("I ordered it by mistake", "I placed it by accident"),
    "found_better_price": ("I found it cheaper at another shop", "another store has it for less"),
    "delivery_too_slow": ("the delivery takes too long for me", "I need it sooner than your delivery date"),
}
#: Rule 3 on the cancellation reason code.
CANCEL_RULE = "policy 3: use the customer's reason"
_RELATIONS = ("wife", "husband", "mother", "father", "son", "daughter", "colleague", "roommate")


def _unshipped_order(
    scene: Scene, person: Person, *, placed_on: date, status: str = "processing"
) -> PlacedOrder:
    """A pending or processing order whose units are reserved in its warehouse (as `cancel_order` expects)."""
    product = scene.product()
    lines = [scene.line(product, scene.rng.choice((1, 2)) if product["price_cents"] < 10000 else 1)]
    if scene.rng.random() < 0.3:
        lines.append(scene.line(scene.product(lambda p: p["id"] != product["id"])))
    order = scene.order(person, lines, status=status, placed_on=placed_on)
    for line in lines:
        scene.stock(
            line.product["id"], order.warehouse, available=scene.rng.randint(0, 25), reserve=line.quantity
        )
    return order


#: The arguments of `update_order_address` that take an address (line, city, state, zip), in that order.
ADDRESS_ARGS = ("address_line", "city", "state", "zip_code")


def address_update(order: PlacedOrder, new: tuple[str, str, str, str]) -> GoldAction:
    """The call that sends `order` to the address `new` (line, city, state, zip)."""
    return call("update_order_address", order_id=order.id, **dict(zip(ADDRESS_ARGS, new, strict=True)))


def _names(order: PlacedOrder) -> str:
    return " and ".join(line.product["name"] for line in order.lines)


def cancel_order(ctx: ScenarioContext) -> Task:
    """Cancel while pending or processing (the tool refunds); refuse once shipped (R3)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    status = rng.choices(("pending", "processing", "shipped"), weights=(2, 5, 3))[0]
    reason = rng.choice(tuple(CANCEL_TEXT))
    if status == "shipped":
        order = scene.order(
            person,
            [scene.line(scene.product())],
            status="shipped",
            placed_on=TODAY - timedelta(rng.randint(1, 4)),
        )
        scene.ship(order, "in_transit", order.placed_on + timedelta(days=1))
    else:
        order = _unshipped_order(scene, person, placed_on=TODAY - timedelta(rng.randint(0, 2)), status=status)
    cancel = call("cancel_order", order_id=order.id, reason=reason)
    said = rng.choice(CANCEL_TEXT[reason])
    fields: dict[str, Any] = {
        "user": person.user(
            goal=f"Cancel order {order.id} ({_names(order)}).",
            known={"order_id": order.id},
            unknown=["the order's shipping status"],
            instructions="If told it has shipped, accept returning it after delivery instead.",
            script=conversation(
                f"Hi, please cancel my order {order.id} - {said}.",
                identity=person.identity_line(),
                yes="Yes, cancel it please."
                if status != "shipped"
                else "Oh. Okay, I'll return it once it arrives.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if status == "shipped":
        return ctx.task(
            description="Cancellation of an order already in transit: refuse (a return is possible later).",
            **order_refusal(
                person,
                order,
                cancel,
                "cancellation",
                "shipped",
                reply(
                    f"I'm sorry, order {order.id} has already shipped, so it can't be cancelled; you can "
                    "return it once it arrives.",
                    "It has already shipped, so cancelling isn't possible; a return after delivery is.",
                ),
            ),
            **fields,
        )
    return ctx.task(
        difficulty_tags=["cancellation", "generated"],
        description=f"Cancel a {status} order ({reason}); the tool refunds "
        f"{dollars_and_cents(order.total_cents)}.",
        gold_actions=[person.verify(), cancel],
        determined_by=said_reason("orders.cancel_reason", CANCEL_RULE, said, reason),
        **fields,
    )


def address_change(ctx: ScenarioContext) -> Task:
    """Re-address an unshipped order once verified (maybe at a second try); refuse others (R1, R2, R4)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    variant = rng.choices(("retry", "direct", "third-party"), weights=(4, 3, 3))[0]
    old = scene.address(near=person)
    while old[3] == person.zip_code:
        old = scene.address(near=person)
    if variant == "retry":  # moved: the account already has the new address, the order the old one
        new = (person.address_line, person.city, person.state, person.zip_code)
    else:
        old = (person.address_line, person.city, person.state, person.zip_code)
        new = scene.address(near=person if rng.random() < 0.6 else None)
    order = scene.order(
        person,
        [scene.line(scene.product())],
        status=rng.choice(("pending", "processing", "processing")),
        placed_on=TODAY - timedelta(rng.randint(0, 1)),
        ship_to=old,
    )
    where = f"{new[0]}, {new[1]}, {new[2]} {new[3]}"
    update = address_update(order, new)
    if variant == "third-party":
        relation = rng.choice(_RELATIONS)
        return ctx.task(
            difficulty_tags=["refusal", "identity", "third-party", "generated"],
            description=f"The customer's {relation} asks to re-address {order.id}: not the account holder.",
            user=user_spec(
                f"the {relation} of {person.name}; helpful, knows the account details.",
                f"Have order {order.id} shipped to {where}.",
                [
                    f"Hi, I'm calling for my {relation} {person.first_name} - could you change the delivery "
                    f"address of order {order.id} to {where}?",
                    f"Sure, the email is {person.email} and the zip is {person.zip_code}.",
                    f"Okay, I'll ask {person.first_name} to contact you.",
                ],
                person.known(order_id=order.id),
                instructions=f"Say early you are calling for your {relation}. If refused, accept.",
            ),
            initial_patch=scene.initial_patch(),
            wrong_actions=[person.verify(), update],
            rubric=[
                f"Did the agent decline to change order {order.id} because the caller is not the account "
                f"holder, and ask {person.first_name} to contact support themselves?"
            ],
        )
    script = [f"Hi, can you change the shipping address of order {order.id} to {where}?"]
    if variant == "retry":
        script = [
            f"Hi, I just moved and my order {order.id} is going to my old address. Can you fix it?",
            f"My email is {person.email} and my zip is {old[3]}.",
            f"Oh wait, I updated my account - my zip is {person.zip_code} now. The new address is {where}.",
        ]
    else:
        script.append(person.identity_line())
    return ctx.task(
        difficulty_tags=["address-change", "identity"]
        + (["identity-retry"] if variant == "retry" else [])
        + ["generated"],
        description=f"Re-address an unshipped order to {where}"
        + (" after a first identity attempt with the old zip." if variant == "retry" else "."),
        user=person.user(
            goal=f"Have order {order.id} shipped to {where}.",
            known={"order_id": order.id, "new_address": where}
            | ({"old_zip_code": old[3]} if variant == "retry" else {}),
            instructions="Give your old zip first; when told it does not match, give the new one."
            if variant == "retry"
            else "Confirm the change when asked.",
            script=[*script, "Yes, that's right.", "Thanks, that's all for today."],
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[person.verify(), update],
    )


def promo_code(ctx: ScenarioContext) -> Task:
    """Add a promo code after checkout only if every condition of rule 15 holds; else refuse (R15)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    promo = ctx.pick("promotions")
    age = rng.randint(0, 10)
    placed_on = TODAY - timedelta(days=age)
    status = rng.choices(("processing", "shipped"), weights=(4, 1))[0]
    product = scene.product(lambda p: p["price_cents"] < 60000)
    lines = [scene.line(product, rng.choice((1, 2)) if product["price_cents"] < 15000 else 1)]
    order = scene.order(person, lines, status=status, placed_on=placed_on)
    if status == "shipped":
        scene.ship(order, "in_transit", placed_on + timedelta(days=1))
    min_tier = promo["min_tier"]
    checks = {
        "the order has shipped": status == "processing",
        f"the order is {age} days old": age <= PROMO_MAX_AGE_DAYS,
        "the code was not valid that day": promo["valid_from"]
        <= placed_on.isoformat()
        <= promo["valid_until"],
        "the subtotal is below the minimum": order.subtotal_cents >= promo["min_subtotal_cents"],
        "the tier is too low": min_tier is None or TIER[person.tier].rank >= TIER[min_tier].rank,
    }
    failed = [why for why, ok in checks.items() if not ok]
    # The decisive fact of each failed condition, in the order of `checks`: what the agent must say.
    placed = placed_on.isoformat()
    facts = {
        "the order has shipped": "shipped",
        f"the order is {age} days old": str(PROMO_MAX_AGE_DAYS),
        "the code was not valid that day": promo["valid_until"]
        if placed > promo["valid_until"]
        else promo["valid_from"],
        "the subtotal is below the minimum": dollars_and_cents(promo["min_subtotal_cents"] or 0),
        "the tier is too low": TIER[min_tier].name if min_tier is not None else "",
    }
    if promo["percent_off"] is not None:
        discount = order.subtotal_cents * promo["percent_off"] // 100
    else:
        discount = min(promo["amount_off_cents"], order.subtotal_cents)
    code = promo["code"]
    apply = call("apply_promotion", order_id=order.id, code=code)
    fields: dict[str, Any] = {
        "user": person.user(
            goal=f"Apply promo code {code} to order {order.id}.",
            known={"order_id": order.id, "promo_code": code},
            unknown=["the code's conditions"],
            instructions="If the code cannot be applied, accept the explanation; do not ask for other codes.",
            script=conversation(
                f"Hi, I forgot to enter the code {code} on order {order.id}. Can you still apply it?",
                identity=person.identity_line(),
                yes="Yes please, great, thanks!" if not failed else "Oh well, never mind then.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        "initial_patch": scene.initial_patch(),
    }
    if not failed:
        tell = rng.random() < 0.5
        return ctx.task(
            difficulty_tags=["promotion", "refund", "generated"],
            description=f"Apply {code} after checkout: every condition holds, "
            f"{dollars_and_cents(discount)} refunded.",
            gold_actions=[person.verify(), call("get_promotion", code=code), apply],
            communicate=[dollars_and_cents(discount)] if tell else [],
            reference_reply=reply(
                f"{code} applies to this order: it takes {dollars_and_cents(discount)} off, refunded to your "
                "payment method. Shall I apply it?",
                f"Applying the code gives you {dollars_and_cents(discount)} back. Shall I do it?",
            )
            if tell
            else None,
            **fields,
        )
    return ctx.task(
        difficulty_tags=["refusal", "promotion", "generated"],
        description=f"Apply {code} after checkout: refuse, {failed[0]}.",
        **refusal(
            facts[failed[0]],
            _promo_refusal(code, facts[failed[0]], failed[0], age),
            reads=[call("get_promotion", code=code), call("get_order", order_id=order.id)],
            wrong=[person.verify(), apply],
        ),
        **fields,
    )


def _promo_refusal(code: str, fact: str, why: str, age: int) -> ReferenceReply:
    """How a good agent refuses a promotion code, the decisive fact of the first failed condition first."""
    if fact == "shipped":
        return reply(
            "Your order has already shipped, and a code can only be added before an order ships.",
            f"Since the order is shipped, {code} can't be applied any more.",
        )
    if fact == str(PROMO_MAX_AGE_DAYS):
        return reply(
            f"A code can only be added within {fact} days of ordering, and this order was placed {age} days "
            "ago, so I can't apply it.",
            f"Codes have to be applied in the first {fact} days after an order; yours is past that.",
        )
    if why == "the code was not valid that day":
        day = month_day_year(date.fromisoformat(fact))
        return reply(
            f"{code} wasn't valid on the day you ordered: its validity boundary is {day}, so it can't be "
            "applied.",
            f"The code's validity doesn't cover your order date ({fact}), so I can't add it.",
        )
    if fact.startswith("$"):
        return reply(
            f"{code} needs an order subtotal of at least {fact}, and yours is lower, so it can't apply.",
            f"The minimum subtotal for that code is {fact}, which this order doesn't reach.",
        )
    return reply(
        f"{code} is only for {fact} members and above, and your tier is lower, so I can't apply it.",
        f"That code needs {fact} tier or higher, which your membership isn't.",
    )


def multi_step(ctx: ScenarioContext) -> Task:
    """Three or four requests at once: cancel, re-address, return, delay credit (R1, R3-R6, R9)."""
    scene = Scene(ctx)
    rng = ctx.rng
    person = scene.customer()
    parts = rng.sample(("cancel", "address", "return", "delay"), k=rng.choices((3, 4), weights=(4, 1))[0])
    asks: list[str] = []
    writes: list[GoldAction] = []
    determined: dict[str, str] = {}
    late_order: PlacedOrder | None = None
    if "delay" in parts:
        late, since = rng.randint(3, 9), rng.randint(2, TIER[person.tier].return_window_days)
        delivered_on = TODAY - timedelta(days=since)
        product = scene.product(lambda p: DELAY_MIN_TOTAL_CENTS <= p["price_cents"] <= 90000)
        late_order = scene.order(
            person,
            [scene.line(product)],
            status="delivered",
            placed_on=delivered_on - timedelta(days=late + 5),
        )
        scene.ship(late_order, "delivered", late_order.placed_on + timedelta(days=1), delivered_on)
        credit = delay_credit(late_order.total_cents)
        asks.append(f"order {late_order.id} arrived {late} days later than promised - is there compensation?")
        writes.append(
            call(
                "issue_store_credit",
                customer_id=person.id,
                amount_cents=credit,
                reason="delay_compensation",
                order_id=late_order.id,
            )
        )
        determined |= DELAY_CREDIT
    if "return" in parts:
        if late_order is not None and rng.random() < 0.5:
            order = late_order
        else:
            product = scene.product(lambda p: not p["final_sale"] and p["price_cents"] <= 80000)
            since = rng.randint(1, TIER[person.tier].return_window_days)
            order = scene.delivered(person, [scene.line(product)], TODAY - timedelta(days=since))
        line = order.lines[0]
        reason = rng.choice(("changed_mind", "defective", "wrong_item"))
        waived, _ = return_terms(person, line, 1, reason)
        said = rng.choice(RETURN_REASON_TEXT[reason])
        asks.append(f"I want to return the {line.product['name']} from order {order.id}: {said}.")
        determined |= said_reason("returns.reason", RETURN_RULE, said, reason)
        writes.append(
            call(
                "create_return",
                order_id=order.id,
                order_item_id=line.id,
                quantity=1,
                reason=reason,
                waive_return_fee=waived,
                refund_payment_method_id=order.payment_method_id,
            )
        )
    if "cancel" in parts:
        order = _unshipped_order(scene, person, placed_on=TODAY - timedelta(rng.randint(0, 1)))
        reason = rng.choice(tuple(CANCEL_TEXT))
        said = rng.choice(CANCEL_TEXT[reason])
        asks.append(f"please cancel order {order.id}, {said}.")
        determined |= said_reason("orders.cancel_reason", CANCEL_RULE, said, reason)
        writes.append(call("cancel_order", order_id=order.id, reason=reason))
    if "address" in parts:
        new = scene.address(near=person)
        order = scene.order(
            person,
            [scene.line(scene.product())],
            status="processing",
            placed_on=TODAY,
            ship_to=scene.address(),
        )
        asks.append(f"order {order.id} should go to {new[0]}, {new[1]}, {new[2]} {new[3]} instead.")
        writes.append(address_update(order, new))
    ordinals = ("First", "Second", "Third", "And last")
    opening = "Hi, I have a few things today. " + " ".join(
        f"{o}, {a}" for o, a in zip(ordinals, asks, strict=False)
    )
    return ctx.task(
        difficulty_tags=["multi-step", *sorted(parts), "generated"],
        description=f"{len(writes)} requests in one conversation: "
        + ", ".join(p for p in ("delay", "return", "cancel", "address") if p in parts)
        + ".",
        user=person.user(
            goal="Get all of these done: " + " ".join(asks),
            unknown=["the compensation and refund amounts"],
            instructions="Confirm everything the agent proposes.",
            script=conversation(
                opening,
                identity=person.identity_line(),
                yes="Yes to all of that, thank you.",
                thanks="Thanks, that's all for today.",
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[person.verify(), *writes],
        determined_by=determined,
    )
