"""Families about money owed on a trip.

Delay compensation (rules 5, 9-11, with the supervisor limit) and cancellation refunds (rules 7-8, with the
refund-exception hold). Amounts come from `_policy` and the fare class rows.
"""

from __future__ import annotations

from datetime import timedelta

from env_server.domain import (
    GoldAction,
    ReferenceReply,
    ScenarioContext,
    call,
    conversation,
    dollars,
    month_day,
    refusal,
    reply,
    user_spec,
)
from env_server.domains.travel.families._policy import (
    COMPENSATION_LIMIT_CENTS,
    DAY,
    THANKS,
    WEEK,
    Row,
    compensation_due,
    refund_percent,
    when,
)
from env_server.domains.travel.families._scene import Person, Scene, Trip
from env_server.domains.travel.models import NOW
from env_server.domains.travel.seed import CAUSES, CONTROLLABLE
from shared.tasks import Task

#: What fixes the category of a compensation hold (the `determined_by` reason of generated tasks).
REVIEW_CATEGORY_RULE = "policy 11: a compensation total over $500 goes to a review with category compensation"
_DELAYS = (45, 95, 150, 175, 180, 190, 240, 300, 359, 360, 420, 480)
FARES = ("BASIC", "STANDARD", "FLEX", "BUSINESS")


def _past_disruption(scene: Scene) -> Row:
    """A fresh flight of the past week that landed late or was cancelled, for any cause."""
    like = scene.ctx.pick("flights")
    day = NOW.date() - timedelta(days=scene.rng.randint(1, 8))
    cause = scene.rng.choice(CAUSES)
    if scene.rng.random() < 0.3:
        return scene.fresh_flight(like, day, "cancelled", 0, cause)
    return scene.fresh_flight(like, day, "landed", scene.rng.choice(_DELAYS), cause)


def issue(trip: Trip, flight: Row, amount: int) -> GoldAction:
    """Rule 11: a voucher up to the limit, a supervisor review above it."""
    if amount > COMPENSATION_LIMIT_CENTS:
        return call(
            "request_supervisor_review",
            reservation_id=trip.reservation_id,
            category="compensation",
            amount_cents=amount,
            summary=f"Compensation of {dollars(amount)} for {flight['flight_number']} exceeds the "
            "agent limit.",
        )
    return call(
        "issue_compensation",
        reservation_id=trip.reservation_id,
        flight_id=flight["flight_id"],
        amount_cents=amount,
    )


def trouble(flight: Row, cause: bool = True) -> str:
    """What happened to a disrupted flight, as the customer says it (with its cause, if they know it)."""
    why = f" ({flight['disruption_cause'].replace('_', ' ')})" if cause else ""
    if flight["status"] == "cancelled":
        return f"was cancelled by the airline{why}"
    return f"landed {flight['delay_minutes']} minutes late{why}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _party(travellers: int) -> str:
    return f"{travellers} of us travelling" if travellers > 1 else "I travelled alone"


def _ineligible_because(flight: Row) -> str:
    """The decisive fact of a refusal (rule 9): the uncontrollable cause, else the 180-minute threshold."""
    if flight["disruption_cause"] not in CONTROLLABLE:
        return "weather" if flight["disruption_cause"] == "weather" else "traffic"  # "air traffic (control)"
    return "180"


def _no_compensation(flight: Row) -> ReferenceReply:
    """How a good agent refuses compensation, with the decisive fact of `_ineligible_because`."""
    number = flight["flight_number"]
    if _ineligible_because(flight) == "180":
        return reply(
            f"Compensation starts at a delay of 180 minutes, and {number} was {flight['delay_minutes']} "
            "minutes late, so it doesn't qualify.",
            "Delays qualify only from 180 minutes; yours was shorter, I'm sorry.",
        )
    cause = "weather" if flight["disruption_cause"] == "weather" else "air traffic control"
    return reply(
        f"The disruption of {number} was caused by {cause}, which is outside the airline's control, so no "
        "compensation is due.",
        f"Delays caused by {cause} aren't compensated, however long they are.",
    )


def compensation(ctx: ScenarioContext) -> Task:
    """Rules 5, 9-11: compensation for a disrupted flight by delay, cause, travellers and tier.

    Above $500 a supervisor review instead; nothing when the disruption is not eligible.
    """
    scene = Scene(ctx)
    flight = _past_disruption(scene)
    holder = scene.person(loyalty=0.7)
    trip = scene.trip(
        holder, scene.rng.choice(FARES), [flight], scene.rng.choices((1, 2, 3, 4), (40, 35, 15, 10))[0]
    )
    amount = compensation_due(flight, len(trip.travellers), holder.tier)
    tier = f"a {holder.tier}-tier loyalty member" if holder.tier else "not in the loyalty programme"
    script = [
        f"Hello. My flight {flight['flight_number']} on {month_day(when(flight))} {trouble(flight, False)}. "
        f"Reservation {trip.reservation_id}, {_party(len(trip.travellers))}. Is there compensation?",
        holder.identity_line(),
    ]
    user = user_spec(
        persona=scene.persona(holder, f"{tier}, unhappy about a disrupted flight"),
        goal=f"Get compensation for {flight['flight_number']} on {month_day(when(flight))}",
        known=holder.known(reservation_id=trip.reservation_id, flight=flight["flight_number"]),
        unknown=["whether compensation is due", "how much"],
        instructions="Accept a voucher, a supervisor review, or a refusal the agent explains.",
        script=script,
    )
    common = {"user": user, "initial_patch": scene.initial_patch()}
    if not amount:
        user.script.append("I see. Okay, thank you.")
        hypothetical = compensation_due(
            {**flight, "disruption_cause": "mechanical", "delay_minutes": max(flight["delay_minutes"], 180)},
            len(trip.travellers),
            holder.tier,
        )
        return ctx.task(
            difficulty_tags=["refusal", "compensation", flight["disruption_cause"]],
            description="No compensation: the cause is not controllable or the delay is under 180 minutes.",
            **refusal(
                _ineligible_because(flight),
                _no_compensation(flight),
                reads=[trip.get()],
                wrong=[
                    holder.verify(),
                    trip.get(),
                    issue(trip, flight, min(hypothetical, COMPENSATION_LIMIT_CENTS)),
                ],
            ),
            **common,
        )
    review = amount > COMPENSATION_LIMIT_CENTS
    user.script.append("Yes, please pass it to a supervisor." if review else "Yes, please issue the voucher.")
    user.script.append(THANKS)
    return ctx.task(
        difficulty_tags=[
            "compensation",
            "supervisor-review" if review else "voucher",
            holder.tier or "no-loyalty",
        ],
        description=f"Compensation of {dollars(amount)} ({_count(len(trip.travellers), 'traveller')}, "
        f"{holder.tier or 'no'} tier)" + (": above $500, a supervisor decides." if review else "."),
        gold_actions=[holder.verify(), trip.get(), issue(trip, flight, amount)],
        wrong_actions=[
            holder.verify(),
            trip.get(),
            issue(trip, flight, min(amount, COMPENSATION_LIMIT_CENTS)),
        ]
        if review
        else [],
        communicate=["supervisor"] if review else [],
        reference_reply=reply(
            "The compensation for your party comes to more than $500, so a supervisor has to review it; I "
            "can pass it on now. Shall I do that?",
            "That amount is above what I can issue myself, so it goes to a supervisor. Would you like me to "
            "submit it?",
        )
        if review
        else None,
        determined_by={"supervisor_reviews.category": REVIEW_CATEGORY_RULE} if review else {},
        **common,
    )


def _cancellable_trip(scene: Scene, holder: Person, fare_code: str) -> tuple[Trip, bool]:
    """A future trip, sometimes booked in the last 24 hours, sometimes hit by an airline cancellation."""
    cabin = scene.fares[fare_code]["cabin"]
    travellers = scene.rng.choices((1, 2, 3, 4), (45, 35, 15, 5))[0]
    # Rule 7's notice brackets: under 24 h, 24 h to 7 days, 7 days or more.
    low, high = scene.rng.choice(((NOW, NOW + DAY), (NOW + DAY, NOW + WEEK), (NOW + WEEK, NOW + 2 * WEEK)))
    airline_cancelled = scene.rng.random() < 0.15
    if airline_cancelled:
        like = scene.ctx.pick("flights")
        cause = scene.rng.choice(CAUSES)
        outbound = scene.fresh_flight(like, low.date() + timedelta(days=1), "cancelled", 0, cause)
    else:
        outbound = scene.upcoming(lambda f: low <= when(f) < high)
    back = scene.return_after(outbound, cabin, travellers) if scene.rng.random() < 0.5 else None
    flights = [outbound, back] if back else [outbound]
    booked_at = None
    if when(outbound) - NOW >= timedelta(days=7) and scene.rng.random() < 0.3:
        booked_at = NOW - timedelta(hours=scene.rng.randint(1, 22), minutes=scene.rng.randint(0, 59))
    return scene.trip(holder, fare_code, flights, travellers, booked_at=booked_at), airline_cancelled


def cancel_refund(ctx: ScenarioContext) -> Task:
    """Rules 7-8: cancel and refund by fare class and notice.

    100% after an airline cancellation or within 24 h of booking; an illness or bereavement request for more
    than the rules allow goes to a supervisor instead.
    """
    scene = Scene(ctx)
    fare_code = scene.rng.choices(FARES, weights=(25, 35, 25, 15))[0]
    holder = scene.person()
    trip, airline_cancelled = _cancellable_trip(scene, holder, fare_code)
    pct = refund_percent(trip.fare, trip.booked_at, when(trip.flights[0]), airline_cancelled)
    refund = trip.ticket_value * pct // 100
    reason = scene.rng.choice(
        ("Plans changed", "Trip no longer needed", "Meeting cancelled", "Found another way")
    )
    cancel: GoldAction = call(
        "cancel_reservation", reservation_id=trip.reservation_id, refund_cents=refund, reason=reason
    )
    first = trip.flights[0]
    opening = (
        f"Hi, I need to cancel reservation {trip.reservation_id} — {first['flight_number']} on "
        f"{month_day(when(first))}."
    )
    if airline_cancelled:
        opening += " You cancelled that flight anyway."
    if pct < 100 and not airline_cancelled and scene.rng.random() < 0.3:
        illness = scene.rng.choice(
            ("I've been diagnosed with pneumonia", "there has been a death in the family")
        )
        return ctx.task(
            difficulty_tags=["refund-exception", "supervisor-review", fare_code.lower()],
            description=f"A refund beyond the fare rules ({pct}% due) for illness or bereavement: hold for a "
            "supervisor, do not cancel.",
            user=user_spec(
                persona=scene.persona(holder, "going through a hard time"),
                goal=f"Get a full refund of reservation {trip.reservation_id} because {illness}",
                known=holder.known(reservation_id=trip.reservation_id),
                unknown=["the refund rules"],
                instructions="Insist on a full refund. Accept that a supervisor will review it; do not "
                "cancel for a partial refund.",
                script=conversation(
                    f"{opening} Unfortunately {illness}, so I need a full refund, please.",
                    identity=holder.identity_line(),
                    yes="Yes, please ask a supervisor. I'll wait to hear back before cancelling anything.",
                    thanks=THANKS,
                ),
            ),
            initial_patch=scene.initial_patch(),
            **refusal(
                "supervisor",
                reply(
                    "A full refund beyond the fare rules needs a supervisor's review; I can "
                    "request it now and "
                    "leave the booking as it is until they decide. Shall I?",
                    "A supervisor has to approve a refund like that. Would you like me to ask for "
                    "the review?",
                ),
                reads=[
                    holder.verify(),
                    trip.get(),
                    call(
                        "request_supervisor_review",
                        reservation_id=trip.reservation_id,
                        category="refund_exception",
                        amount_cents=trip.ticket_value,
                        summary=f"Full refund requested because {illness}.",
                    ),
                ],
                wrong=[
                    holder.verify(),
                    trip.get(),
                    call(cancel.name, **{**cancel.arguments, "refund_cents": trip.ticket_value}),
                ],
            ),
            determined_by={
                "supervisor_reviews.category": "policy 8: a refund asked for because of illness or "
                "bereavement goes to a review with category refund_exception"
            },
        )
    return ctx.task(
        difficulty_tags=["cancellation", "refund", fare_code.lower(), f"refund-{pct}"]
        + (["airline-cancelled"] if airline_cancelled else []),
        description=f"Cancel a {trip.fare['name']} trip {(when(first) - NOW) // timedelta(hours=1)} h before "
        "departure"
        + (" after the airline cancelled a flight" if airline_cancelled else "")
        + f": {pct}% of {dollars(trip.ticket_value)} back.",
        user=user_spec(
            persona=scene.persona(holder, "who no longer needs the trip"),
            goal=f"Cancel reservation {trip.reservation_id} and get back what the rules allow",
            known=holder.known(reservation_id=trip.reservation_id, reason=reason),
            unknown=["the refund amount"],
            instructions="Accept the refund the agent quotes, even if it is nothing, and confirm the "
            "cancellation.",
            script=conversation(
                opening,
                identity=holder.identity_line(),
                yes="Yes, cancel the whole reservation, even if I get nothing back.",
                thanks=THANKS,
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), cancel],
    )
