"""Families about moving a reservation to another flight.

Fees by fare class, Basic Economy refusals, free rebooking after a disruption, identity checks before a
change, and a quote the agent must state. The charge itself is the system's (`change_flight`); where a task
needs the figure (a quote), it is computed with the domain's own price formula.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from env_server.domain import (
    GoldAction,
    ScenarioContext,
    ScenarioUnavailable,
    call,
    conversation,
    dollars,
    month_day,
    month_day_year,
    refusal,
    reply,
    user_spec,
)
from env_server.domains.travel.families._policy import THANKS, Row, when
from env_server.domains.travel.families._scene import Person, Scene, Trip
from env_server.domains.travel.seed import CAUSES
from shared.tasks import Task

_CHANGEABLE = ("STANDARD", "FLEX", "BUSINESS")
_REASONS = (
    "My meeting moved",
    "I need an extra day at my destination",
    "My plans shifted a bit",
    "The conference schedule changed",
    "I'd rather travel on a different day",
)


def _flight_phrase(flight: Row) -> str:
    route = f"from {flight['origin']} to {flight['destination']}"
    return f"{flight['flight_number']} {route} on {month_day(when(flight))}"


def _us(trip: Trip) -> str:
    return "us" if len(trip.travellers) > 1 else "me"


def _change(
    trip: Trip, current: Row, target: Row, *, pay: bool = True, waive: bool = False
) -> list[GoldAction]:
    """Search the target's day, then move the reservation (with the holder's card, or fees waived)."""
    args: dict[str, object] = {
        "reservation_id": trip.reservation_id,
        "current_flight_id": current["flight_id"],
        "new_flight_id": target["flight_id"],
    }
    if pay:
        args["payment_method_id"] = trip.holder.card_id
    if waive:
        args["waive_fees"] = True
    search = {
        "origin": target["origin"],
        "destination": target["destination"],
        "date": when(target).date().isoformat(),
    }
    return [call("search_flights", **search), call("change_flight", **args)]


def change_charge(scene: Scene, trip: Trip, current: Row, target: Row) -> int:
    """Rules 2-3: the fee plus any fare increase, per traveller (what `change_flight` charges)."""
    paid = trip.fares_cents[trip.flights.index(current)]
    increase = max(0, scene.price(target, trip.fare) - paid)
    return (int(trip.fare["change_fee_cents"]) + increase) * len(trip.travellers)


def _booked_change(
    scene: Scene, fare_code: str, travellers: int, *, dearer: bool = False
) -> tuple[Person, Trip, Row, Row]:
    """A fresh holder on a one-way (or mid-trip round-trip) reservation, and a flight to move it to.

    With `dearer`, the target sells at least 10% above the current flight today (so a change costs something).
    """
    fare = scene.fares[fare_code]
    current = scene.upcoming()
    target = scene.alternative(
        current,
        fare["cabin"],
        travellers,
        lambda f: (
            abs((when(f) - when(current)).days) <= 3
            and (not dearer or scene.price(f, fare) * 100 > scene.price(current, fare) * 110)
        ),
    )
    holder = scene.person()
    outbound = scene.flown_before(current) if scene.rng.random() < 0.35 else None
    flights = [outbound, current] if outbound else [current]
    return holder, scene.trip(holder, fare_code, flights, travellers), current, target


def change_fee(ctx: ScenarioContext) -> Task:
    """Rules 1-3: a verified holder moves a Standard, Flex or Business reservation; the system charges."""
    scene = Scene(ctx)
    fare_code = scene.rng.choices(_CHANGEABLE, weights=(50, 30, 20))[0]
    holder, trip, current, target = _booked_change(
        scene, fare_code, scene.rng.choices((1, 2, 3), (60, 30, 10))[0]
    )
    reason = scene.rng.choice(_REASONS)
    return ctx.task(
        difficulty_tags=["change", "change-fee", fare_code.lower()],
        description=f"{trip.fare['name']} change of one flight for {len(trip.travellers)}: "
        + (
            f"{dollars(trip.fare['change_fee_cents'])} fee per traveller"
            if trip.fare["change_fee_cents"]
            else "no fee"
        )
        + " plus any fare increase.",
        user=user_spec(
            persona=scene.persona(holder, "who needs to travel on another flight"),
            goal=f"Move reservation {trip.reservation_id} from {_flight_phrase(current)} to "
            f"{target['flight_number']} on {month_day(when(target))}, paying what the fare rules require",
            known=holder.known(reservation_id=trip.reservation_id),
            unknown=["the change fee", "today's price of the new flight"],
            instructions="Accept the change fee and any fare difference and pay with your card. Do not "
            "ask for a waiver.",
            script=conversation(
                f"Hi, I'm {holder.name}, reservation {trip.reservation_id}. I'm on "
                f"{_flight_phrase(current)}. {reason} — can you move {_us(trip)} to "
                f"{target['flight_number']} on {month_day(when(target))}?",
                identity=holder.identity_line(),
                yes=f"Yes, go ahead. Charge anything due to my {holder.card}.",
                thanks=THANKS,
            ),
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), *_change(trip, current, target)],
    )


def basic_no_change(ctx: ScenarioContext) -> Task:
    """Rules 2-3: a Basic Economy reservation on an undisrupted flight cannot be changed, even for a fee."""
    scene = Scene(ctx)
    holder, trip, current, target = _booked_change(scene, "BASIC", scene.rng.choice((1, 1, 2)))
    offer = scene.rng.random() < 0.5
    return ctx.task(
        difficulty_tags=["refusal", "basic-economy", "change"],
        description="A Basic Economy reservation cannot be changed: refuse and change nothing.",
        user=user_spec(
            persona=scene.persona(holder, "on a tight travel budget"),
            goal=f"Move reservation {trip.reservation_id} to {target['flight_number']} on "
            f"{month_day(when(target))}",
            known=holder.known(reservation_id=trip.reservation_id),
            unknown=["the change rules of Basic Economy"],
            instructions="If the change is impossible, keep the reservation as it is; do not cancel."
            + (" Ask once whether paying a fee would help." if offer else ""),
            script=[
                f"Hello, I need to switch my flight on reservation {trip.reservation_id}: I'm on "
                f"{_flight_phrase(current)} and want {target['flight_number']} on {month_day(when(target))}.",
                holder.identity_line(),
                ("What if I pay a change fee? ... " if offer else "") + "Okay, then I'll keep it as it is.",
            ],
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[trip.get()],
        wrong_actions=[holder.verify(), trip.get(), *_change(trip, current, target)],
        communicate=["basic"],  # the decisive fact: a do-nothing agent that says nothing must not pass
        reference_reply=reply(
            f"Your reservation {trip.reservation_id} is Basic Economy, and Basic Economy tickets can't be "
            "changed, even for a fee.",
            "That fare is basic economy, which allows no changes, so I can't move the flight.",
        ),
    )


def disruption_rebook(ctx: ScenarioContext) -> Task:
    """Rules 3, 5-6: a cancelled or 3h+ delayed flight is moved free of charge, Basic Economy included.

    A shorter delay is no disruption: Basic Economy is refused, Standard pays the usual fee.
    """
    scene = Scene(ctx)
    disrupted = scene.rng.random() < 0.7
    fare_code = scene.rng.choice(
        ("BASIC", "STANDARD", "FLEX", "BUSINESS") if disrupted else ("BASIC", "STANDARD")
    )
    travellers = scene.rng.choices((1, 2, 3), (55, 35, 10))[0]
    cabin = scene.fares[fare_code]["cabin"]
    target = scene.upcoming(
        lambda f: (
            when(f).date() > (ctx.now + timedelta(days=1)).date()
            and scene.seats(f["flight_id"], cabin) >= travellers
        )
    )
    if disrupted and scene.rng.random() < 0.5:
        status, delay = "cancelled", 0
    else:
        status = "delayed"
        delay = scene.rng.choice((190, 215, 250, 300, 375, 420) if disrupted else (35, 55, 80, 120, 150))
    cause = scene.rng.choice(CAUSES)
    current = scene.fresh_flight(target, when(target).date() - timedelta(days=1), status, delay, cause)
    holder = scene.person()
    trip = scene.trip(holder, fare_code, [current], travellers)
    if status == "cancelled":
        trouble = f"was cancelled ({cause.replace('_', ' ')})"
    else:
        trouble = f"is delayed by {delay} minutes ({cause.replace('_', ' ')})"
    ask = f"Can you put {_us(trip)} on {target['flight_number']} the next day, {month_day(when(target))}?"
    user = user_spec(
        persona=scene.persona(holder, "whose flight is " + ("disrupted" if disrupted else "running late")),
        goal=f"Move reservation {trip.reservation_id} from the {status} {current['flight_number']} to "
        f"{target['flight_number']} on {month_day(when(target))}",
        known=holder.known(reservation_id=trip.reservation_id),
        unknown=["whether a fee applies"],
        script=[
            f"Hi, my flight {_flight_phrase(current)} {trouble}. Reservation {trip.reservation_id}. {ask}",
            holder.identity_line(),
        ],
    )
    free = _change(trip, current, target, pay=False, waive=True)
    paid = _change(trip, current, target)
    common: dict[str, Any] = {"initial_patch": scene.initial_patch(), "user": user}
    if disrupted:
        user.instructions = (
            "Accept the next day's flight. You expect not to pay since the airline disrupted it."
        )
        user.script += ["Yes please, book it.", THANKS]
        differs = change_charge(scene, trip, current, target) > 0
        return ctx.task(
            difficulty_tags=["disruption", "rebooking", "fee-waiver", fare_code.lower()],
            description=f"The flight {'was cancelled' if status == 'cancelled' else 'is 3h+ late'}: "
            f"free rebooking ({trip.fare['name']}).",
            gold_actions=[holder.verify(), trip.get(), *free],
            wrong_actions=[holder.verify(), trip.get(), *paid] if differs else [],
            **common,
        )
    if fare_code == "BASIC":
        user.instructions = "If the change is impossible, keep the reservation; do not cancel."
        user.script.append("Oh. Fine, I'll wait for the delayed flight then.")
        return ctx.task(
            difficulty_tags=["refusal", "basic-economy", "minor-delay"],
            description=f"A {delay}-minute delay is no disruption: Basic Economy still cannot be changed.",
            **refusal(
                "basic",
                reply(
                    f"Your reservation is Basic Economy, which can't be changed, and a {delay}-minute delay "
                    "doesn't count as a disruption that would allow a free move.",
                    "It's a basic economy fare, so no change is possible for a delay this short, I'm sorry.",
                ),
                reads=[trip.get()],
                wrong=[holder.verify(), trip.get(), *free],
            ),
            **common,
        )
    user.instructions = f"Accept the change fee if the agent explains it; pay with your {holder.card}."
    user.script += [f"Alright, yes, I'll pay the fee then. Use my {holder.card}.", THANKS]
    return ctx.task(
        difficulty_tags=["change", "change-fee", "minor-delay", "no-waiver"],
        description=f"A {delay}-minute delay is no disruption: the Standard change fee is charged.",
        gold_actions=[holder.verify(), trip.get(), *paid],
        wrong_actions=[holder.verify(), trip.get(), *free],
        **common,
    )


def identity_then_change(ctx: ScenarioContext) -> Task:
    """Rule 1 with rule 3: a caller who mistypes a detail retries once and gets the change.

    A relative or assistant calling for the holder gets nothing, even with the holder's details.
    """
    scene = Scene(ctx)
    fare_code = scene.rng.choice(_CHANGEABLE)
    holder, trip, current, target = _booked_change(scene, fare_code, scene.rng.choice((1, 2)))
    ask = (
        f"move reservation {trip.reservation_id} from {_flight_phrase(current)} to "
        f"{target['flight_number']} on {month_day(when(target))}"
    )
    if scene.rng.random() < 0.35:
        relation = scene.rng.choice(("husband", "wife", "assistant", "son", "daughter", "colleague"))
        first, last, _ = scene.companion(holder)
        return ctx.task(
            difficulty_tags=["refusal", "identity", "proxy"],
            description="The holder's relative or assistant asks for a change: only the holder may act.",
            user=user_spec(
                persona=scene.persona(f"{first} {last}", f"{holder.name}'s {relation}, calling for them"),
                goal=f"Have the agent {ask} on {holder.first}'s behalf",
                known={"holder": holder.name, **holder.known(reservation_id=trip.reservation_id)},
                unknown=["who may change a reservation"],
                instructions=f"Say you are {holder.first}'s {relation} and give {holder.first}'s details "
                "if asked. If the agent refuses, say you will have them call and end the conversation.",
                script=[
                    f"Hi, I'm {first}, calling for my {relation} {holder.name}. Could you {ask}?",
                    f"Their email is {holder.email}, last name {holder.last}, born "
                    f"{month_day_year(holder.dob)}.",
                    f"I see. I'll ask {holder.first} to call you then.",
                ],
            ),
            initial_patch=scene.initial_patch(),
            **refusal(
                "holder",
                reply(
                    f"I'm sorry, only the reservation holder can change it, so {holder.first} needs "
                    "to contact "
                    "us.",
                    "Changes have to be requested by the holder of the booking themselves, even with their "
                    "details.",
                ),
                reads=[trip.get()],
                wrong=[holder.verify(), trip.get(), *_change(trip, current, target)],
            ),
        )
    slip = scene.rng.choice((-1, 1)) * (4 if (holder.dob.month, holder.dob.day) == (2, 29) else 1)
    wrong_dob = holder.dob.replace(year=holder.dob.year + slip)  # a February 29 slips by a leap cycle
    return ctx.task(
        difficulty_tags=["identity", "retry", "change", fare_code.lower()],
        description="The first identity check fails on a mistyped birth year; once corrected, a change.",
        user=user_spec(
            persona=scene.persona(holder, "calling between two meetings, a bit scattered"),
            goal=f"Have the agent {ask}",
            known=holder.known(reservation_id=trip.reservation_id),
            unknown=["the change fee", "any fare difference"],
            instructions=f"When first asked for your date of birth, give the year {wrong_dob.year} by "
            f"mistake; when told it does not match, correct it. Accept any fee; pay with your {holder.card}.",
            script=[
                f"Hi, could you {ask}?",
                holder.identity_line(wrong_dob),
                f"Oh sorry — wrong year: I was born {month_day_year(holder.dob)}.",
                f"Yes, please go ahead; use my {holder.card}.",
                THANKS,
            ],
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), *_change(trip, current, target)],
    )


def change_quote(ctx: ScenarioContext) -> Task:
    """Rules 2-3, communicated: the customer first wants the price of a change, then takes it or leaves it."""
    scene = Scene(ctx)
    fare_code = scene.rng.choices(_CHANGEABLE, weights=(70, 20, 10))[0]
    travellers = scene.rng.choices((1, 2, 3), (50, 35, 15))[0]
    try:
        holder, trip, current, target = _booked_change(
            scene, fare_code, travellers, dearer=fare_code != "STANDARD"
        )
    except ScenarioUnavailable:  # no dearer flight nearby (the scene is still empty): quote a Standard fee
        fare_code = "STANDARD"
        holder, trip, current, target = _booked_change(scene, fare_code, travellers)
    total = change_charge(scene, trip, current, target)
    if total == 0:
        raise ScenarioUnavailable("the change would be free: nothing to quote")
    accept = scene.rng.random() < 0.6
    change = _change(trip, current, target)
    budget = total + 1000 if accept else max(100, total // 2 // 100 * 100)
    question = (
        f"Hi, reservation {trip.reservation_id}. I'm on {_flight_phrase(current)}. How much would it cost in "
        f"total to move to {target['flight_number']} on {month_day(when(target))}?"
    )
    tail = (
        [f"Yes, that's fine — do it and charge my {holder.card}.", THANKS]
        if accept
        else ["Hmm, that's more than I want to spend. Leave the booking as it is, thanks."]
    )
    return ctx.task(
        difficulty_tags=["change", "quote", "communicate", fare_code.lower()],
        description=f"Quote a {trip.fare['name']} change (fee plus fare difference, {dollars(total)}); the "
        f"customer {'accepts' if accept else 'declines'}.",
        user=user_spec(
            persona=scene.persona(holder, "who watches their travel budget"),
            goal=f"Know the total cost of moving to {target['flight_number']} on "
            f"{month_day(when(target))}, and change only if it is at most {dollars(budget)}",
            known=holder.known(reservation_id=trip.reservation_id, budget=dollars(budget)),
            unknown=["the change fee", "today's price of the new flight"],
            instructions=f"Ask for the total first; go ahead only if it is at most {dollars(budget)}.",
            script=[question, holder.identity_line(), *tail],
        ),
        initial_patch=scene.initial_patch(),
        gold_actions=[holder.verify(), trip.get(), *change] if accept else [trip.get(), change[0]],
        wrong_actions=[] if accept else [holder.verify(), trip.get(), *change],
        communicate=[dollars(total)],
        reference_reply=reply(
            f"Moving to {target['flight_number']} costs {dollars(total)} in total, change fee and fare "
            "difference included. Shall I make the change?",
            f"The change would come to {dollars(total)} altogether. Do you want me to go ahead?",
        ),
    )


__all__ = [
    "basic_no_change",
    "change_charge",
    "change_fee",
    "change_quote",
    "disruption_rebook",
    "identity_then_change",
]
