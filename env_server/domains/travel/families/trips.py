"""Families about the people and bags on a trip, and a call that combines several requests.

Checked-bag allowances (fees from the system's own formula), the fixed number of travellers (a companion books
separately, no ticket transfer, name corrections are fine), and a multi-step call with three or four writes.
"""

from __future__ import annotations

from datetime import date, timedelta

from env_server.domain import (
    GoldAction,
    ScenarioContext,
    ScenarioUnavailable,
    call,
    conversation,
    dollars,
    month_day,
    month_day_year,
    user_spec,
)
from env_server.domains.travel.families._policy import (
    COMPENSATION_LIMIT_CENTS,
    THANKS,
    compensation_due,
    when,
)
from env_server.domains.travel.families._scene import Scene, Trip
from env_server.domains.travel.families.money import FARES, REVIEW_CATEGORY_RULE, issue, trouble
from env_server.domains.travel.fares import MAX_BAGS_PER_TRAVELER, TIER_BAG_BONUS, baggage_fee_cents
from env_server.domains.travel.models import NOW
from env_server.domains.travel.seed import CONTROLLABLE
from shared.tasks import Task


def _bag_fee(trip: Trip, checked: int, adding: int) -> int:
    """Rule 12 with the system's own fee formula: fare bags plus the holder's tier bonus are free."""
    allowance = int(trip.fare["free_bags"]) + TIER_BAG_BONUS[trip.holder.tier or "member"]
    return baggage_fee_cents(checked, adding, allowance)


def baggage(ctx: ScenarioContext) -> Task:
    """Rules 2, 12: bags per traveller against the fare's free bags plus the holder's tier bonus.

    Bags already checked count first; each bag beyond the allowance costs $50.
    """
    scene = Scene(ctx)
    fare_code = scene.rng.choice(FARES)
    holder = scene.person(loyalty=0.7)
    travellers = scene.rng.choices((1, 2, 3), (40, 45, 15))[0]
    trip = scene.trip(holder, fare_code, [scene.upcoming()], travellers)
    actions: list[GoldAction] = []
    asks: list[str] = []
    total = 0
    for t in trip.travellers:
        checked = scene.rng.choice((0, 0, 0, 1, 2))
        if checked:
            scene.bags(trip, t, checked, _bag_fee(trip, 0, checked))
        adding = scene.rng.choice((0, 1, 1, 2, 2, 3))
        if not actions and t is trip.travellers[-1]:
            adding = max(adding, 1)
        adding = min(adding, MAX_BAGS_PER_TRAVELER - checked)
        if not adding:
            continue
        fee = _bag_fee(trip, checked, adding)
        total += fee
        args = {
            "reservation_id": trip.reservation_id,
            "traveler_id": t.traveler_id,
            "quantity": adding,
            "fee_cents": fee,
        }
        if fee:
            args["payment_method_id"] = holder.card_id
        actions.append(call("add_checked_bags", **args))
        who = "me" if t.is_holder else t.first
        asks.append(f"{adding} more for {who}" if checked else f"{adding} for {who}")
    if not actions:
        raise ScenarioUnavailable("nobody adds a bag")
    return ctx.task(
        difficulty_tags=["baggage", fare_code.lower(), holder.tier or "no-loyalty"]
        + (["multi-write"] if len(actions) > 1 else []),
        description=f"Checked bags on a {trip.fare['name']} trip ({holder.tier or 'no'} tier): "
        f"{dollars(total)} in fees.",
        user=user_spec(
            persona=scene.persona(holder, "packing for a long trip"),
            goal=f"Add checked bags on reservation {trip.reservation_id}: " + ", ".join(asks),
            known=holder.known(reservation_id=trip.reservation_id),
            unknown=["the free baggage allowance", "the fee"],
            instructions=f"Accept the fee the agent quotes and pay with your {holder.card}.",
            script=conversation(
                f"Hi! On reservation {trip.reservation_id} we need checked bags: {', '.join(asks)}.",
                identity=holder.identity_line(),
                yes=f"Yes, sounds good, go ahead — use my {holder.card} for anything that costs extra.",
                thanks=THANKS,
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), *actions],
    )


def _misspelt(name: str, scene: Scene) -> str:
    i = scene.rng.randrange(1, len(name) - 1)
    return (
        name[:i] + name[i + 1] + name[i] + name[i + 2 :]
        if name[i] != name[i + 1]
        else name[:i] + name[i] + name[i:]
    )


def travellers_fixed(ctx: ScenarioContext) -> Task:
    """Rules 4, 17: travellers are never added or swapped, but a misspelt name is corrected.

    A companion gets a separate booking on the same flights; a ticket is not transferred to someone else.
    """
    scene = Scene(ctx)
    fare_code = scene.rng.choice(FARES)
    holder = scene.person()
    cabin = scene.fares[fare_code]["cabin"]
    outbound = scene.upcoming(lambda f: scene.seats(f["flight_id"], cabin) >= 1)
    back = scene.return_after(outbound, cabin, 1) if scene.rng.random() < 0.5 else None
    trip = scene.trip(holder, fare_code, [outbound, back] if back else [outbound], scene.rng.choice((1, 2)))
    draw = scene.rng.random()
    known = holder.known(reservation_id=trip.reservation_id)
    if draw < 0.4:
        first, last, dob = scene.companion(holder)
        return ctx.task(
            difficulty_tags=["travellers", "new-booking", "passenger-count"],
            description="A traveller cannot be added to a reservation: book the companion separately.",
            user=user_spec(
                persona=scene.persona(holder, "whose friend decided to come along"),
                goal=f"Have {first} {last} fly on the same flights as {trip.reservation_id}",
                known={
                    **known,
                    "companion": f"{first} {last}",
                    "companion_date_of_birth": dob.isoformat(),
                },
                unknown=["whether travellers can be added", "the price of a new ticket"],
                instructions="Ask to add the companion to the reservation. If impossible, accept a "
                f"separate booking on the same flights in the same fare class, paid with your {holder.card}.",
                script=[
                    f"Hi, I'd like to add {first} {last} to my reservation {trip.reservation_id} — they're "
                    "coming with me.",
                    holder.identity_line(),
                    f"I see. Then book {first} a separate ticket on the same flights and fare, with my "
                    f"{holder.card}. {first} {last}, born {month_day_year(dob)}.",
                    "Yes, confirmed.",
                    THANKS,
                ],
            ),
            initial_patch=scene.initial_patch(),
            gold_actions=[
                holder.verify(),
                trip.get(),
                call(
                    "book_reservation",
                    holder_id=holder.passenger_id,
                    flight_ids=[f["flight_id"] for f in trip.flights],
                    fare_class=fare_code,
                    travelers=[{"first_name": first, "last_name": last, "date_of_birth": dob.isoformat()}],
                    payment_method_id=holder.card_id,
                ),
            ],
            determined_by={
                "reservations.fare_class": "user: asks for the same fare as "
                f"{trip.reservation_id} ({fare_code})"
            },
        )
    traveller = scene.rng.choice(trip.travellers)
    if draw < 0.7:
        first, last, dob = scene.companion(holder)
        return ctx.task(
            difficulty_tags=["refusal", "name-transfer", "passenger-count"],
            description="A ticket cannot be transferred to another person: refuse and change nothing.",
            user=user_spec(
                persona=scene.persona(holder, f"whose travel companion {traveller.first} dropped out"),
                goal=f"Put {first} {last} on {trip.reservation_id} in place of {traveller.name}",
                known={**known, "replacement": f"{first} {last}", "replacement_dob": dob.isoformat()},
                unknown=["whether tickets can be transferred"],
                instructions="Ask for the swap. If it is not allowed, keep the reservation as it is.",
                script=[
                    f"Hi, {traveller.name} can't fly on reservation {trip.reservation_id} anymore. Please "
                    f"put {first} {last} (born {month_day_year(dob)}) on the ticket instead.",
                    holder.identity_line(),
                    "Oh, I didn't know that. Then leave it as it is for now.",
                ],
            ),
            initial_patch=scene.initial_patch(),
            gold_actions=[trip.get()],
            wrong_actions=[
                holder.verify(),
                trip.get(),
                _update(trip, traveller.traveler_id, first, last, dob),
            ],
            # No single word carries rule 4 ("transfer", "transferable", "replace"...): a narrow question.
            rubric=["Did the agent tell the customer that a ticket cannot be transferred to another person?"],
        )
    wrong = _misspelt(traveller.last, scene)
    for row in scene.patch["travelers"]:
        if row["traveler_id"] == traveller.traveler_id:
            row["last_name"] = wrong
    whose = "my" if traveller.is_holder else f"{traveller.first}'s"
    return ctx.task(
        difficulty_tags=["name-correction", "travellers"],
        description="A misspelt last name on the ticket is corrected (same person, no transfer).",
        user=user_spec(
            persona=scene.persona(holder, "who noticed a typo on the booking"),
            goal=f"Correct the last name of {traveller.first} on {trip.reservation_id} from {wrong} to "
            f"{traveller.last}",
            known={
                **known,
                "correct_name": traveller.name,
                "date_of_birth_traveller": traveller.dob.isoformat(),
            },
            unknown=[],
            instructions="Confirm the correction when the agent reads it back.",
            script=conversation(
                f"Hi, on reservation {trip.reservation_id} {whose} last name is misspelt as {wrong}; "
                f"it should be {traveller.last}.",
                identity=holder.identity_line(),
                yes="Yes, that's right, please fix it.",
                thanks=THANKS,
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[
            holder.verify(),
            trip.get(),
            _update(trip, traveller.traveler_id, traveller.first, traveller.last, traveller.dob),
        ],
    )


def _update(trip: Trip, traveler_id: str, first: str, last: str, dob: date) -> GoldAction:
    return call(
        "update_traveler",
        reservation_id=trip.reservation_id,
        traveler_id=traveler_id,
        first_name=first,
        last_name=last,
        date_of_birth=dob.isoformat(),
    )


def multi_step(ctx: ScenarioContext) -> Task:
    """Rules 1, 3, 9-12, 16 in one call: three or four requests after a late outbound flight.

    Compensation for the outbound, a paid change of the return, two checked bags, SMS alerts for the return.
    """
    scene = Scene(ctx)
    fare_code = scene.rng.choice(("STANDARD", "FLEX", "BUSINESS"))
    cabin = scene.fares[fare_code]["cabin"]
    travellers = scene.rng.choice((1, 1, 2))
    back = scene.upcoming(lambda f: scene.seats(f["flight_id"], cabin) >= 0)
    target = scene.alternative(back, cabin, travellers, lambda f: 1 <= abs((when(f) - when(back)).days) <= 3)
    like = scene.ctx.pick(
        "flights", lambda f: (f["origin"], f["destination"]) == (back["destination"], back["origin"])
    )
    outbound = scene.fresh_flight(
        like,
        NOW.date() - timedelta(days=scene.rng.randint(1, 6)),
        "landed",
        scene.rng.choice((190, 240, 300, 375, 420)),
        scene.rng.choice(CONTROLLABLE),
    )
    holder = scene.person(loyalty=0.6)
    trip = scene.trip(holder, fare_code, [outbound, back], travellers)
    parts = ["compensation", "change", "bags", "alerts"]
    if scene.rng.random() < 0.5:
        parts.remove(scene.rng.choice(parts))
    amount = compensation_due(outbound, travellers, holder.tier)
    new_back = target if "change" in parts else back
    actions: list[GoldAction] = []
    asks: list[str] = []
    if "compensation" in parts:
        asks.append(f"compensation for {outbound['flight_number']}, which {trouble(outbound)}")
        actions.append(issue(trip, outbound, amount))
    if "change" in parts:
        asks.append(
            f"moving my return {back['flight_number']} to {target['flight_number']} on "
            f"{month_day(when(target))}"
        )
        actions.append(
            call(
                "search_flights",
                origin=target["origin"],
                destination=target["destination"],
                date=when(target).date().isoformat(),
            )
        )
        actions.append(
            call(
                "change_flight",
                reservation_id=trip.reservation_id,
                current_flight_id=back["flight_id"],
                new_flight_id=target["flight_id"],
                payment_method_id=holder.card_id,
            )
        )
    if "bags" in parts:
        me = next(t for t in trip.travellers if t.is_holder)
        fee = _bag_fee(trip, 0, 2)
        args = {
            "reservation_id": trip.reservation_id,
            "traveler_id": me.traveler_id,
            "quantity": 2,
            "fee_cents": fee,
        }
        if fee:
            args["payment_method_id"] = holder.card_id
        asks.append("two checked bags for me on the way back")
        actions.append(call("add_checked_bags", **args))
    determined: dict[str, str] = {}
    if "compensation" in parts and amount > COMPENSATION_LIMIT_CENTS:
        determined["supervisor_reviews.category"] = REVIEW_CATEGORY_RULE
    if "alerts" in parts:
        determined["flight_alerts.channel"] = "user: asks for text alerts (sms)"
        determined["flight_alerts.contact"] = f"user: gives the number {holder.phone}"
        asks.append(f"text alerts at {holder.phone} for my return flight {new_back['flight_number']}")
        actions.append(
            call(
                "subscribe_flight_alerts",
                flight_id=new_back["flight_id"],
                channel="sms",
                contact=holder.phone,
            )
        )
    return ctx.task(
        difficulty_tags=["multi-step", *parts],
        description=f"One call, {len(parts)} requests: " + ", ".join(parts) + ".",
        user=user_spec(
            persona=scene.persona(holder, "mid-trip after a late outbound flight; organised"),
            goal="Get " + "; ".join(asks),
            known=holder.known(reservation_id=trip.reservation_id, phone=holder.phone),
            unknown=["the compensation amount", "the change fee", "the bag fee"],
            instructions=f"Ask for everything; accept the amounts quoted and pay with your {holder.card}.",
            script=conversation(
                f"Hi, reservation {trip.reservation_id}. I need a few things: " + "; ".join(asks) + ".",
                identity=holder.identity_line(),
                yes=f"Yes to all of it — charge anything due to my {holder.card}.",
                thanks=THANKS,
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), *actions],
        determined_by=determined,
    )
