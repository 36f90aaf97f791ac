"""Families around a guest's own booking: cancellation refunds, date and room changes, extras, new stays."""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import (
    ScenarioContext,
    ScenarioUnavailable,
    call,
    conversation,
    day_month,
    dollars,
    refusal,
    reply,
)
from env_server.domains.hotel.families._base import (
    EXTRA_PRICES,
    INVENTORY_LAST_NIGHT,
    MOODS,
    Scene,
    booking,
    complete_inventory,
    days_text,
    future_stay,
    guest_at_hotel,
    inventory,
    new_account,
    new_card,
    new_guest,
    pick_hotel,
    refund_determined,
    stay,
    stay_in_progress,
)
from env_server.domains.hotel.families._rules import (
    FULL_REFUND_NOTICE,
    change_fee_applies,
    extra_is_complimentary,
    refund_percent,
)
from env_server.domains.hotel.models import BookingStatus, ExtraKind, RatePlan
from env_server.domains.hotel.pricing import extra_price_cents
from shared.tasks import Task

REASONS = ("Plans changed", "Trip postponed", "Meeting cancelled", "Family emergency", "Flight cancelled")


def _notice(ctx: ScenarioContext, hotel_tier: str) -> int:
    """Days before check-in, drawn around the tier's refund boundaries (rules 4 and 5)."""
    edge = FULL_REFUND_NOTICE[hotel_tier]
    return max(0, ctx.rng.choice((0, 1, 2, edge // 2 + 1, edge - 1, edge, edge + 1, ctx.rng.randint(0, 20))))


def cancel_refund(ctx: ScenarioContext) -> Task:
    """Cancel a confirmed booking; the refund follows the hotel tier, notice, rate plan and loyalty tier."""
    rng = ctx.rng
    hotel = pick_hotel(ctx)
    guest = new_guest(ctx)
    card = new_card(ctx, guest)
    days = _notice(ctx, hotel.tier)
    s = future_stay(ctx, hotel, rng.choice(hotel.room_types), days, rng.randint(1, 4))
    plan: RatePlan = "non_refundable" if rng.random() < 0.15 else "flexible"
    bk, pay = booking(ctx, guest, s, card, rate_plan=plan)
    percent = refund_percent(hotel.tier, days, guest.tier, plan)
    reason = rng.choice(REASONS)
    opening = f"Hi, I need to cancel my booking {bk.booking_id} at {hotel.row.name}. {reason}."
    if plan == "non_refundable":
        opening += " I know it was the non-refundable rate."
    return ctx.task(
        difficulty_tags=["cancellation", "refund", f"{hotel.tier}-tier", f"{guest.tier}-member"],
        description=f"Cancel a {plan} booking {days_text(days)} before check-in at a {hotel.tier} hotel: "
        f"{percent}% refund.",
        user=guest.user(
            f"Cancel booking {bk.booking_id} and get whatever refund applies",
            conversation(
                opening, identity=guest.identity_line(), yes="Understood. Yes, please go ahead and cancel it."
            ),
            detail=rng.choice(MOODS),
            known={"booking_id": bk.booking_id},
            unknown=["the refund amount", "the cancellation rules"],
            instructions="Give your details when asked. Accept the refund the agent states and confirm.",
        ),
        initial_patch=Scene(ctx).put(*hotel.fresh, guest.row, card, bk, pay).initial_patch(),
        gold_actions=[
            guest.verify(),
            call("cancel_booking", booking_id=bk.booking_id, refund_percent=percent, reason=reason),
        ],
        determined_by=refund_determined(),
    )


def cancel_quote(ctx: ScenarioContext) -> Task:
    """A guest asks what a cancellation would refund, hears the amount, then cancels (`communicate`)."""
    rng = ctx.rng
    hotel = pick_hotel(ctx, fresh=True)
    guest = new_guest(ctx)
    card = new_card(ctx, guest)
    room = rng.choice(hotel.room_types[:2])
    for _ in range(4):  # the amount is checked as written, so keep it under $1,000 (no thousands separator)
        days = _notice(ctx, hotel.tier)
        percent = refund_percent(hotel.tier, days, guest.tier, "flexible")
        s = future_stay(ctx, hotel, room, days, rng.randint(1, 3))
        refund = s.total() * percent // 100
        if 0 < refund < 100_000:
            break
    else:
        raise ScenarioUnavailable("no draw with a refund between $0 and $1,000")
    bk, pay = booking(ctx, guest, s, card)
    return ctx.task(
        difficulty_tags=["cancellation", "refund", "communicate", f"{hotel.tier}-tier"],
        description=f"Quote the refund ({dollars(refund)}) of a cancellation {days} days out, then cancel.",
        user=guest.user(
            f"Find out what cancelling booking {bk.booking_id} refunds, then cancel it",
            conversation(
                f"Hello, if I cancel booking {bk.booking_id} at {hotel.row.name} now, how much do I "
                "get "
                "back exactly?",
                identity=guest.identity_line(),
                yes="OK, that works for me. Yes, please cancel it.",
            ),
            detail=rng.choice(MOODS),
            known={"booking_id": bk.booking_id},
            unknown=["the refund amount"],
            instructions="Ask for the exact refund in dollars before agreeing; then confirm the "
            "cancellation.",
        ),
        initial_patch=Scene(ctx).put(*hotel.fresh, guest.row, card, bk, pay).initial_patch(),
        gold_actions=[
            guest.verify(),
            call(
                "cancel_booking",
                booking_id=bk.booking_id,
                refund_percent=percent,
                reason="Guest cancelled",
            ),
        ],
        communicate=[dollars(refund).lstrip("$")],
        reference_reply=reply(
            f"Cancelling booking {bk.booking_id} now refunds {dollars(refund)}, {percent}% of the stay. "
            "Shall I cancel it?",
            f"You would get {dollars(refund)} back. Do you want me to go ahead with the cancellation?",
        ),
        determined_by=refund_determined(),
    )


def change_booking(ctx: ScenarioContext) -> Task:
    """Move a booking's dates (or, at a fresh hotel, its room type); the fee follows rule 8.

    A non-refundable booking cannot change (rule 6): then nothing changes, and making the change is wrong.
    """
    rng = ctx.rng
    hotel = pick_hotel(ctx)
    guest = new_guest(ctx)
    card = new_card(ctx, guest)
    days = _notice(ctx, hotel.tier)
    room = rng.choice(hotel.room_types)
    s = future_stay(ctx, hotel, room, days, rng.randint(1, 4), margin=2)
    plan: RatePlan = "non_refundable" if rng.random() < 0.2 else "flexible"
    bk, pay = booking(ctx, guest, s, card, rate_plan=plan)
    fee = change_fee_applies(hotel.tier, days, guest.tier)
    others = [r for r in hotel.room_types if r is not room and r.max_occupancy >= bk.adults]
    rows = inventory(ctx, room, s.rates)
    if others and rng.random() < 0.5:
        new_room = rng.choice(others)
        moved = stay(ctx, hotel, new_room, s.check_in, len(s.nights))
        rows += inventory(ctx, new_room, moved.rates)
        ask = f"switch booking {bk.booking_id} at {hotel.row.name} to a {new_room.name} room"
        change = call(
            "change_room_type",
            booking_id=bk.booking_id,
            room_type_id=new_room.room_type_id,
            charge_change_fee=fee,
        )
    else:
        length = len(s.nights) + rng.choice((0, 0, 1, -1 if len(s.nights) > 1 else 1))
        shifts = [
            d
            for d in (-2, -1, 1, 2, 3, 7)
            if days + d >= 0 and s.check_in + timedelta(days=d + length - 1) <= INVENTORY_LAST_NIGHT
        ]
        if not shifts:
            raise ScenarioUnavailable("no new dates inside the loaded inventory")
        moved = stay(ctx, hotel, room, s.check_in + timedelta(days=rng.choice(shifts)), length)
        rows += inventory(ctx, room, {n: r for n, r in moved.rates.items() if n not in s.rates})
        ask = (
            f"move booking {bk.booking_id} at {hotel.row.name} so that I arrive on "
            f"{day_month(moved.check_in)} and leave on {day_month(moved.check_out)}"
        )
        dates = {"check_in": moved.check_in.isoformat(), "check_out": moved.check_out.isoformat()}
        change = call("change_booking_dates", booking_id=bk.booking_id, **dates, charge_change_fee=fee)
    base = [guest.row, card, bk, pay, *complete_inventory(ctx, hotel, rows)]
    spec = guest.user(
        ask[0].upper() + ask[1:],
        conversation(
            f"Hi, could you {ask}?",
            identity=guest.identity_line(),
            yes="Oh, I see. I'll keep the booking as it is then."
            if plan == "non_refundable"
            else "Yes, that's fine, please make the change.",
        ),
        detail=rng.choice(MOODS),
        known={"booking_id": bk.booking_id},
        unknown=["the new price", "the change rules"],
        instructions="Accept any price difference and fee the agent states. If the change is not allowed, "
        "accept that and keep the booking.",
    )
    tags = ["change", f"{hotel.tier}-tier", f"{guest.tier}-member"]
    if plan == "non_refundable":
        return ctx.task(
            difficulty_tags=[*tags, "refusal", "non-refundable"],
            description="A non-refundable booking cannot change: explain, change nothing.",
            user=spec,
            initial_patch=Scene(ctx).put(*hotel.fresh, *base).initial_patch(),
            **refusal(
                "non-refundable",
                reply(
                    f"I'm sorry, booking {bk.booking_id} is on a non-refundable rate, and non-refundable "
                    "bookings can't be changed.",
                    "That reservation was booked non-refundable, so its dates and room can't be changed.",
                ),
                reads=[call("get_booking", booking_id=bk.booking_id)],
                wrong=[guest.verify(), change],
            ),
        )
    return ctx.task(
        difficulty_tags=tags,
        description=f"Change a booking {days_text(days)} before check-in at a {hotel.tier} hotel "
        f"({'with' if fee else 'without'} the change fee).",
        user=spec,
        initial_patch=Scene(ctx).put(*hotel.fresh, *base).initial_patch(),
        gold_actions=[guest.verify(), change],
    )


EXTRA_WORDS: dict[ExtraKind, str] = {
    "breakfast": "breakfast",
    "parking": "parking",
    "late_checkout": "a late check-out",
}


def add_extra(ctx: ScenarioContext) -> Task:
    """Add an extra to a confirmed or checked-in booking; it is complimentary only as rule 11 says.

    Some guests want it only if it is free: when it is not, nothing changes and adding it free is wrong.
    """
    rng = ctx.rng
    hotel, guest, card, room = guest_at_hotel(ctx)
    status: BookingStatus
    if rng.random() < 0.4:
        s = stay_in_progress(ctx, hotel, room, arrived=(1, 3), left=(1, 4))
        status = "checked_in"
    else:
        s = future_stay(ctx, hotel, room, rng.randint(0, 25), rng.randint(1, 5))
        status = "confirmed"
    bk, pay = booking(ctx, guest, s, card, status=status)
    extra = rng.choice(tuple(EXTRA_WORDS))
    free = extra_is_complimentary(extra, guest.tier)
    price = extra_price_cents(extra, adults=bk.adults, nights=len(s.nights))
    only_if_free = not free and rng.random() < 0.35
    patch = Scene(ctx).put(*hotel.fresh, guest.row, card, bk, pay).initial_patch()
    where = "I'm staying" if status == "checked_in" else "I have a booking"
    spec = guest.user(
        f"Add {EXTRA_WORDS[extra]} to booking {bk.booking_id}"
        + (" only if it is free" if only_if_free else ""),
        conversation(
            f"Hi, {where} at {hotel.row.name}, {bk.booking_id}. Could you add {EXTRA_WORDS[extra]}?"
            + (" As a member it should be free, right?" if only_if_free else ""),
            identity=guest.identity_line(),
            yes=f"No, I won't pay {dollars(price)} for that, leave it."
            if only_if_free
            else "Great, yes, please add it.",
        ),
        detail=rng.choice(MOODS),
        known={"booking_id": bk.booking_id},
        unknown=["the price of the extra", "the loyalty perks"],
        instructions="Only accept it if it is free."
        if only_if_free
        else "Accept the price the agent states.",
    )
    add = call("add_booking_extra", booking_id=bk.booking_id, extra=extra, complimentary=free)
    if only_if_free:
        return ctx.task(
            difficulty_tags=["extras", "refusal", f"{guest.tier}-member"],
            description=f"{EXTRA_WORDS[extra].capitalize()} is not free for a {guest.tier} member "
            "and the guest declines to pay: no change.",
            user=spec,
            initial_patch=patch,
            **refusal(
                dollars(price),
                reply(
                    f"{EXTRA_WORDS[extra].capitalize()} isn't complimentary for your tier: it would cost "
                    f"{dollars(price)}. Would you like it at that price?",
                    f"For your membership it's a paid extra at {dollars(price)}. Shall I add it?",
                ),
                reads=[call("get_booking", booking_id=bk.booking_id)],
                wrong=[
                    guest.verify(),
                    call("add_booking_extra", booking_id=bk.booking_id, extra=extra, complimentary=True),
                ],
            ),
        )
    return ctx.task(
        difficulty_tags=["extras", "loyalty-perk", f"{guest.tier}-member"],
        description=f"Add {EXTRA_WORDS[extra]} for a {guest.tier} member "
        f"({'complimentary' if free else dollars(price)}).",
        user=spec,
        initial_patch=patch,
        gold_actions=[guest.verify(), add],
        determined_by={
            "booking_extras.extra": f"user (line 0): asks for {EXTRA_WORDS[extra]}",
            "booking_extras.price_cents": EXTRA_PRICES,
        },
    )


def new_booking(ctx: ScenarioContext) -> Task:
    """Book a new stay for a verified guest (rules 10 and 14).

    Private (flexible or non-refundable), a linked traveler at the account's corporate rate, or a guest who
    asks for a company's rate without being linked to it: then the public rate, paid by their own card.
    """
    rng = ctx.rng
    hotel = pick_hotel(ctx)
    room = rng.choice(hotel.room_types)
    s = future_stay(ctx, hotel, room, rng.randint(1, 30), rng.randint(1, 5))
    account, invoice = new_account(ctx)
    variant = rng.choice(("private", "private", "corporate", "not-linked"))
    if variant == "corporate":
        guest = new_guest(ctx, corporate_account_id=account.account_id, corporate_role="traveler")
    else:
        guest = new_guest(ctx)
    card = new_card(ctx, guest)
    adults = rng.randint(1, room.max_occupancy)
    plan = "non_refundable" if variant == "private" and rng.random() < 0.4 else "flexible"
    corporate = variant == "corporate"
    dates = {"check_in": s.check_in.isoformat(), "check_out": s.check_out.isoformat()}
    ask = (
        f"Hello, I'd like to book a {room.name} at {hotel.row.name} in {hotel.row.city} from "
        f"{day_month(s.check_in)} to {day_month(s.check_out)} for {adults} adult{'s' if adults > 1 else ''}"
    )
    if variant == "private":
        ask += (
            ", non-refundable rate please, it's cheaper." if plan == "non_refundable" else ", flexible rate."
        )
    elif corporate:
        ask += f", at the {account.company_name} corporate rate; I travel for them."
    else:
        ask += (
            f". My friend works at {account.company_name}; can I get their corporate rate? If not, the "
            "flexible public rate."
        )
    total = s.total(plan, account.discount_pct if corporate else 0)
    return ctx.task(
        difficulty_tags=["new-booking", variant, f"{hotel.tier}-tier"],
        description=f"A new {variant} booking at the {'corporate' if corporate else 'public'} {plan} rate "
        f"({dollars(total)}).",
        user=guest.user(
            f"Book a {room.name} at {hotel.row.name}, {day_month(s.check_in)} to {day_month(s.check_out)}",
            [
                ask,
                guest.identity_line() + ("" if corporate else f" Charge my {card.label}."),
                "Yes, please book it.",
                "Thank you, that's all.",
            ],
            detail=rng.choice(MOODS),
            known={"card": card.label},
            unknown=["the room type ID", "the price"],
            instructions="Accept the rate and total the agent states and confirm the booking.",
        ),
        initial_patch=Scene(ctx)
        .put(*hotel.fresh, *complete_inventory(ctx, hotel, inventory(ctx, room, s.rates)), guest.row, card)
        .put(*([account, invoice] if variant != "private" else []))
        .initial_patch(),
        gold_actions=[
            guest.verify(),
            call(
                "create_booking",
                guest_id=guest.id,
                room_type_id=room.room_type_id,
                **dates,
                adults=adults,
                rate_plan=plan,
                payment_method_id=invoice.payment_method_id if corporate else card.payment_method_id,
                **({"corporate_account_id": account.account_id} if corporate else {}),
            ),
        ],
        determined_by=_booking_determined(variant, plan),
    )


def _booking_determined(variant: str, plan: str) -> dict[str, str]:
    """What fixes a new booking's rate plan, corporate link and price: the user's request, rules 10 and 14."""
    said = {
        "private": f"user (line 0): asks for the {plan.replace('_', '-')} rate",
        "corporate": "policy 10: a traveler linked to the account books at its corporate rate (flexible)",
        "not-linked": "user (line 0): asks for the flexible public rate if the corporate rate is refused "
        "(policy 10: the guest is not linked to the account)",
    }[variant]
    price = f"{said}; that rate prices the stay (policy 14: the total is confirmed before booking)"
    found = {"bookings.rate_plan": said, "bookings.room_total_cents": price, "payments.amount_cents": price}
    if variant == "corporate":
        found["bookings.corporate_account_id"] = said
    return found
