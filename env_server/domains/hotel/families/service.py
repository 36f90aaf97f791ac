"""Guest-service families: goodwill, contact details, callers who may not act for a guest, many requests."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from env_server.domain import (
    ReferenceReply,
    ScenarioContext,
    ScenarioUnavailable,
    call,
    conversation,
    day_month,
    day_month_year,
    refusal,
    reply,
    user_spec,
)
from env_server.domains.hotel.factories import phone as drawn_phone
from env_server.domains.hotel.families._base import (
    EXTRA_PRICES,
    INVENTORY_LAST_NIGHT,
    MAIL_DOMAINS,
    MOODS,
    TICKET_BOOKING,
    TODAY,
    Guest,
    Scene,
    booking,
    future_stay,
    guest_at_hotel,
    inventory,
    new_guest,
    refund_determined,
    spoken_phone,
    stay,
    stay_in_progress,
)
from env_server.domains.hotel.families._rules import (
    GOODWILL_WINDOW_START,
    change_fee_applies,
    days_before,
    extra_is_complimentary,
    goodwill_points,
    refund_percent,
)
from env_server.domains.hotel.models import (
    Booking,
    BookingStatus,
    ExtraKind,
    LoyaltyTransaction,
    SupportTicket,
    TicketCategory,
)
from env_server.domains.hotel.seed import FIRST_NAMES, LAST_NAMES
from shared.tasks import Task

PROBLEMS: dict[TicketCategory, tuple[str, str]] = {
    "noise": ("There was loud music next door until 2am.", "Construction noise started at 7am every day."),
    "cleanliness": ("The bathroom was dirty when we arrived.", "The sheets in the room were stained."),
    "maintenance": ("The air conditioning broke overnight.", "The shower had no hot water for two days."),
    "billing": ("I was charged twice for the minibar.", "There is a room-service charge I never ordered."),
    "other": ("My wake-up call never came.", "The airport shuttle never showed up."),
}


def _ticket(
    ctx: ScenarioContext, guest: Guest, bk: Booking, category: TicketCategory, summary: str, when: date
) -> SupportTicket:
    return SupportTicket(
        ticket_id=ctx.new_id("TK"),
        guest_id=guest.id,
        booking_id=bk.booking_id,
        category=category,
        status="open",
        summary=summary,
        created_at=datetime.combine(when, time(20)),
    )


def goodwill(ctx: ScenarioContext) -> Task:
    """A problem with a stay (rule 12).

    Goodwill points go by category, doubled for platinum, only for a stay checked in or checked out since
    1 September, and once per stay.

    Either the front desk already logged the ticket and the guest asks for compensation (award, or refuse),
    or the guest reports a new problem that earns nothing (open the ticket only).
    """
    rng = ctx.rng
    hotel, guest, card, room = guest_at_hotel(ctx)
    status: BookingStatus
    if rng.random() < 0.4:
        s = stay_in_progress(ctx, hotel, room, arrived=(1, 4), left=(1, 3))
        status = "checked_in"
    else:
        check_out = rng.choice((date(2026, 8, 30), date(2026, 8, 31), date(2026, 9, 1), date(2026, 9, 2)))
        if rng.random() < 0.5:
            check_out = date(2026, 8, 1) + timedelta(days=rng.randint(0, 60))
        nights = rng.randint(1, 4)
        s = stay(ctx, hotel, room, check_out - timedelta(days=nights), nights)
        status = "checked_out"
    bk, pay = booking(ctx, guest, s, card, status=status)
    category = rng.choice(tuple(PROBLEMS))
    problem = rng.choice(PROBLEMS[category])
    in_window = status == "checked_in" or s.check_out >= GOODWILL_WINDOW_START
    tickets: list[SupportTicket] = []
    awards: list[LoyaltyTransaction] = []
    if rng.random() < 0.2:  # an earlier problem on the same stay already earned points
        earlier = _ticket(ctx, guest, bk, "noise", PROBLEMS["noise"][0], s.check_in)
        earlier.status = "resolved"
        tickets.append(earlier)
        awards.append(
            LoyaltyTransaction(
                transaction_id=ctx.new_id("LT"),
                guest_id=guest.id,
                booking_id=bk.booking_id,
                ticket_id=earlier.ticket_id,
                kind="goodwill",
                points=1_000,
                created_at=earlier.created_at,
            )
        )
    points = goodwill_points(category, guest.tier) if in_window and not awards else 0
    # What the agent must say when the stay earns nothing: the earlier award, the 30-day window, or the
    # category that earns no points.
    decisive = "1,000" if awards else "30" if not in_window else category
    why_not = (
        "the stay was already compensated"
        if awards
        else "the stay is outside the 30-day window"
        if not in_window
        else f"{category} problems earn none"
    )
    logged = points > 0 or rng.random() < 0.5  # a fresh report can only earn nothing (its ticket ID is new)
    when = "I'm staying" if status == "checked_in" else f"I stayed until {day_month(s.check_out)}"
    tags = ["service-recovery", "goodwill", status, f"{guest.tier}-member"]
    if logged:
        ticket = _ticket(ctx, guest, bk, category, problem, min(TODAY, s.check_out) - timedelta(days=1))
        tickets.append(ticket)
        spec = guest.user(
            f"Get compensation for the problem logged in ticket {ticket.ticket_id}",
            conversation(
                f"Hello, {when} at {hotel.row.name}, booking {bk.booking_id}. {problem} The front desk "
                f"logged it as ticket {ticket.ticket_id}. What can you do for me?",
                identity=guest.identity_line(),
                yes="Yes, please. Thank you." if points else "I see. Well, thanks for explaining.",
            ),
            detail=rng.choice(MOODS),
            known={"booking_id": bk.booking_id, "ticket_id": ticket.ticket_id},
            unknown=["the goodwill rules"],
            instructions="Accept loyalty points if offered; accept a clear refusal.",
        )
        patch = Scene(ctx).put(*hotel.fresh, guest.row, card, bk, pay, *tickets, *awards).initial_patch()
        verify = guest.verify()
        if points:
            return ctx.task(
                difficulty_tags=tags,
                description=f"A logged {category} problem on a {status} stay earns {points:,} goodwill "
                "points.",
                user=spec,
                initial_patch=patch,
                gold_actions=[
                    verify,
                    call("award_goodwill_points", ticket_id=ticket.ticket_id, points=points),
                ],
            )
        wrong_points = goodwill_points(category, guest.tier) or 1_000
        return ctx.task(
            difficulty_tags=[*tags, "refusal"],
            description=f"A logged problem ({category}) earns no points: {why_not}.",
            user=spec,
            initial_patch=patch,
            **refusal(
                decisive,
                _no_points_reply(decisive, category, s.check_out),
                reads=[call("get_booking", booking_id=bk.booking_id)],
                wrong=[
                    verify,
                    call("award_goodwill_points", ticket_id=ticket.ticket_id, points=wrong_points),
                ],
            ),
        )
    spec = guest.user(
        f"Report a problem with stay {bk.booking_id}",
        conversation(
            f"Hi, {when} at {hotel.row.name}, booking {bk.booking_id}. {problem} I want this on record.",
            identity=guest.identity_line(),
            yes="Yes, please log it. Thanks.",
        ),
        detail=rng.choice(MOODS),
        known={"booking_id": bk.booking_id},
        unknown=["the goodwill rules"],
        instructions="Report the problem; accept that no points are due if the agent says so.",
    )
    return ctx.task(
        difficulty_tags=[*tags, "ticket-only"],
        description=f"A problem ({category}) is logged as a ticket; no points are due: {why_not}.",
        user=spec,
        initial_patch=Scene(ctx)
        .put(*hotel.fresh, guest.row, card, bk, pay, *tickets, *awards)
        .initial_patch(),
        gold_actions=[
            call(
                "open_support_ticket",
                guest_id=guest.id,
                category=category,
                summary=problem,
                booking_id=bk.booking_id,
            ),
        ],
        determined_by={
            "support_tickets.category": f'policy 12 + user (line 0): "{problem}" is a {category} problem',
            "support_tickets.booking_id": TICKET_BOOKING,
        },
    )


def contact_update(ctx: ScenarioContext) -> Task:
    """A verified guest changes their own phone number, email address or both (rules 1 and 13)."""
    rng = ctx.rng
    guest = new_guest(ctx)
    what = rng.choice(("phone", "email", "both"))
    args: dict[str, str] = {}
    asks = []
    if what in ("phone", "both"):
        args["phone"] = drawn_phone(rng)
        if args["phone"] == guest.row.phone:
            raise ScenarioUnavailable("the new phone number is the old one")
        asks.append(f"my new phone number is {spoken_phone(args['phone'])}")
    if what in ("email", "both"):
        domain = rng.choice([d for d in MAIL_DOMAINS if not guest.row.email.endswith(d)])
        args["email"] = f"{guest.row.first_name}.{guest.row.last_name}{guest.id[2:]}@{domain}".lower()
        asks.append(f"my new email address is {args['email']}")
    return ctx.task(
        difficulty_tags=["contact", "identity", what],
        description=f"A verified guest updates their {what if what != 'both' else 'phone and email'}.",
        user=guest.user(
            "Update the contact details on the profile",
            conversation(
                f"Hi, please update my profile: {' and '.join(asks)}. My current email is {guest.row.email}.",
                identity=guest.identity_line(),
                yes="Yes, that's right, thank you.",
            ),
            detail=rng.choice(MOODS),
            known=args,
            instructions="Give your details when asked and confirm the new contact details.",
        ),
        initial_patch=Scene(ctx).put(guest.row).initial_patch(),
        gold_actions=[
            call("find_guest", email=guest.row.email),
            guest.verify(),
            call("update_guest_contact", guest_id=guest.id, **args),
        ],
        determined_by={f"guests.{k}": f"user (line 0): gives the new {k}" for k in args},
    )


RELATIONS = ("assistant", "husband", "wife", "colleague", "son", "daughter")


def proxy_refusal(ctx: ScenarioContext) -> Task:
    """Someone calls for a guest and knows the guest's details (rules 1 and 2).

    The caller cannot be verified as the guest, so nothing changes; verifying the guest with the caller's
    words and making the change is the wrong trajectory.
    """
    rng = ctx.rng
    hotel, guest, card, room = guest_at_hotel(ctx)
    days = rng.randint(0, 20)
    s = future_stay(ctx, hotel, room, days, rng.randint(1, 4), margin=2)
    bk, pay = booking(ctx, guest, s, card)
    relation = rng.choice(RELATIONS)
    caller = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    rows = inventory(ctx, room, s.rates)
    action = rng.choice(("cancel", "dates", "extra"))
    if action == "cancel":
        asked = "cancel it"
        write = call(
            "cancel_booking",
            booking_id=bk.booking_id,
            refund_percent=refund_percent(hotel.tier, days, guest.tier, "flexible"),
            reason="Plans changed",
        )
    elif action == "dates":
        moved = stay(ctx, hotel, room, s.check_in + timedelta(days=1), len(s.nights))
        rows += inventory(ctx, room, {n: r for n, r in moved.rates.items() if n not in s.rates})
        asked = f"move it to {day_month(moved.check_in)} - {day_month(moved.check_out)}"
        write = call(
            "change_booking_dates",
            booking_id=bk.booking_id,
            check_in=moved.check_in.isoformat(),
            check_out=moved.check_out.isoformat(),
            charge_change_fee=change_fee_applies(hotel.tier, days, guest.tier),
        )
    else:
        asked = "add parking to it"
        write = call("add_booking_extra", booking_id=bk.booking_id, extra="parking", complimentary=False)
    name = guest.name
    dob = guest.row.date_of_birth
    return ctx.task(
        difficulty_tags=["refusal", "identity", "proxy", action],
        description=f"The guest's {relation} asks to {asked}: only the guest can be verified, no change.",
        user=user_spec(
            f"{caller}, {name}'s {relation}; used to handling things for them",
            f"Get {name}'s booking {bk.booking_id} changed: {asked}",
            [
                f"Hello, I'm calling for {name}, I'm their {relation}. Please {asked}: booking "
                f"{bk.booking_id} at {hotel.row.name}.",
                f"Their last name is {guest.row.last_name}, born {day_month_year(dob)}. "
                "I handle this for them.",
                "Fine, I'll ask them to contact you.",
            ],
            {
                "booking_id": bk.booking_id,
                "guest_last_name": guest.row.last_name,
                "guest_date_of_birth": guest.row.date_of_birth.isoformat(),
            },
            unknown=["the identity rules"],
            instructions=f"You are not {name}. Give their details if asked, saying you are the {relation}. "
            "Accept a refusal.",
        ),
        initial_patch=Scene(ctx)
        .put(
            *hotel.fresh,
            guest.row,
            card,
            bk,
            pay,
            *rows,
        )
        .initial_patch(),
        gold_actions=[call("get_booking", booking_id=bk.booking_id)],
        wrong_actions=[guest.verify(), write],
        rubric=[
            f"Did the agent decline the request to {asked} (booking {bk.booking_id}) because only {name}, "
            "the guest, can be verified and act on the booking, not someone calling for them?"
        ],
    )


def multi_request(ctx: ScenarioContext) -> Task:
    """Three requests in one conversation after one verification.

    A new phone number (rule 13), a cancellation (rules 5 to 7), and an extra (rule 11) or a date change
    (rule 8) on a second booking.
    """
    rng = ctx.rng
    hotel, guest, card, room = guest_at_hotel(ctx)
    first_days = rng.randint(0, 12)
    first = future_stay(ctx, hotel, room, first_days, rng.randint(1, 3))
    second = future_stay(
        ctx, hotel, room, first_days + len(first.nights) + rng.randint(1, 10), rng.randint(1, 3), margin=2
    )
    a, pay_a = booking(ctx, guest, first, card)
    b, pay_b = booking(ctx, guest, second, card)
    rows = inventory(ctx, room, {**first.rates, **second.rates})
    phone = drawn_phone(rng)
    if phone == guest.row.phone:
        raise ScenarioUnavailable("the new phone number is the old one")
    percent = refund_percent(hotel.tier, first_days, guest.tier, "flexible")
    if rng.random() < 0.5:
        extras: tuple[ExtraKind, ...] = ("breakfast", "parking", "late_checkout")
        extra = rng.choice(extras)
        second_ask = f"add {extra.replace('_', ' ')} to {b.booking_id}"
        second_write = call(
            "add_booking_extra",
            booking_id=b.booking_id,
            extra=extra,
            complimentary=extra_is_complimentary(extra, guest.tier),
        )
    else:
        moved = stay(ctx, hotel, room, second.check_in + timedelta(days=1), len(second.nights))
        if moved.check_out - timedelta(days=1) > INVENTORY_LAST_NIGHT:
            raise ScenarioUnavailable("new dates past the loaded inventory")
        rows += inventory(ctx, room, {n: r for n, r in moved.rates.items() if n not in second.rates})
        second_ask = (
            f"move {b.booking_id} one day later, to {day_month(moved.check_in)} - "
            f"{day_month(moved.check_out)}"
        )
        fee = change_fee_applies(hotel.tier, days_before(second.check_in), guest.tier)
        second_write = call(
            "change_booking_dates",
            booking_id=b.booking_id,
            check_in=moved.check_in.isoformat(),
            check_out=moved.check_out.isoformat(),
            charge_change_fee=fee,
        )
    return ctx.task(
        difficulty_tags=["multi-step", "contact", "cancellation", second_write.name],
        description=f"Three requests: new phone, cancel one booking ({percent}% refund), and "
        f"{'an extra' if second_write.name == 'add_booking_extra' else 'a date change'} on the other.",
        user=guest.user(
            f"Update the phone number, cancel {a.booking_id} and {second_ask}",
            conversation(
                f"Hi, a few things: my new phone is {spoken_phone(phone)}; please cancel booking "
                f"{a.booking_id} "
                f"at {hotel.row.name}; and {second_ask}. My email is {guest.row.email}.",
                identity=guest.identity_line(),
                yes="Yes, please do all of that.",
            ),
            detail="methodical",
            known={
                "new_phone": phone,
                "booking_to_cancel": a.booking_id,
                "other_booking": b.booking_id,
            },
            unknown=["the refund", "the prices"],
            instructions="Give all requests at once and confirm the agent's summary, whatever the amounts.",
        ),
        initial_patch=Scene(ctx)
        .put(
            *hotel.fresh,
            guest.row,
            card,
            a,
            b,
            pay_a,
            pay_b,
            *rows,
        )
        .initial_patch(),
        gold_actions=[
            call("find_guest", email=guest.row.email),
            guest.verify(),
            call("update_guest_contact", guest_id=guest.id, phone=phone),
            call(
                "cancel_booking",
                booking_id=a.booking_id,
                refund_percent=percent,
                reason="No longer needed",
            ),
            second_write,
        ],
        determined_by={
            **refund_determined(),
            "guests.phone": "user (line 0): gives the new phone number",
            **(
                {
                    "booking_extras.extra": f"user (line 0): asks to {second_ask}",
                    "booking_extras.price_cents": EXTRA_PRICES,
                }
                if second_write.name == "add_booking_extra"
                else {}
            ),
        },
    )


def _no_points_reply(decisive: str, category: str, check_out: date) -> ReferenceReply:
    """What a good agent says when a logged problem earns no goodwill points (the decisive fact first)."""
    if decisive == "1,000":
        return reply(
            "This stay already received 1,000 goodwill points for an earlier problem, and a stay is "
            "compensated only once, so I can't add more.",
            "You were already given 1,000 points on this booking; no second award is possible.",
        )
    if decisive == "30":
        return reply(
            "Goodwill points are only possible for a stay that ended no more than 30 days ago; yours ended "
            f"on {day_month(check_out)}, so I can't offer any.",
            "Compensation is limited to stays within the last 30 days, and this one is older, I'm sorry.",
        )
    return reply(
        f"{category.capitalize()} problems don't earn goodwill points under our policy, so I can't add any.",
        f"Our goodwill rules give no points for a {category} issue, I'm afraid.",
    )
