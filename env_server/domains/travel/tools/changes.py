"""Tools that change or cancel an existing reservation: flights, cabin, traveller details, cancellation."""

from __future__ import annotations

from datetime import date

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.models import Flight, Reservation, Segment
from env_server.domains.travel.tools._common import (
    FLOWN,
    _charge,
    _clean_name,
    _connects,
    _get_fare,
    _get_flight,
    _get_traveler,
    _get_writable_reservation,
    _move_seats,
    _price,
    _refund_to_original,
    _require_bookable,
    _segments,
    _travelers,
)
from env_server.domains.travel.tools._views import ReservationView, reservation_view


def _unflown(ctx: ToolContext, reservation: Reservation, what: str) -> list[tuple[Segment, Flight]]:
    """The reservation's segments with their flights, refusing if any of them has already left."""
    pairs = [(s, _get_flight(ctx, s.flight_id)) for s in _segments(ctx, reservation.reservation_id)]
    for _, flight in pairs:
        if flight.status in FLOWN:
            raise ToolError(
                f"Flight {flight.flight_id} of reservation {reservation.reservation_id} has {flight.status}; "
                f"the reservation can no longer be {what}"
            )
    return pairs


@tool(kind="write")
def change_flight(
    ctx: ToolContext,
    reservation_id: str,
    current_flight_id: str,
    new_flight_id: str,
    payment_method_id: str | None = None,
    waive_fees: bool = False,
) -> ReservationView:
    """Move every traveller of a reservation from one of its flights to another flight on the same route.

    The system charges the fare's change fee per traveller plus the fare difference per traveller when the
    new flight's price for the reservation's fare class is higher (a lower price is not refunded). Set
    waive_fees only when the policy grants a free change; then nothing is charged.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        current_flight_id: the reservation's flight to replace, e.g. "FL-10110".
        new_flight_id: the replacement, same origin and destination, e.g. "FL-10124".
        payment_method_id: the holder's card or voucher for the charge, e.g. "PM-10311"; may be omitted
            when nothing is charged.
        waive_fees: true to charge neither change fee nor fare difference (disrupted flights only).
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    fare = _get_fare(ctx, reservation.fare_class)
    segments = {s.flight_id: s for s in _segments(ctx, reservation_id)}
    if current_flight_id not in segments:
        raise ToolError(f"Flight {current_flight_id} is not on reservation {reservation_id}")
    segment, current = segments[current_flight_id], _get_flight(ctx, current_flight_id)
    if current.status in FLOWN:
        raise ToolError(f"Flight {current_flight_id} has {current.status}; it can no longer be changed")
    new = _get_flight(ctx, new_flight_id)
    if new_flight_id == current_flight_id:
        raise ToolError(f"The reservation is already on flight {new_flight_id}")
    if (new.origin, new.destination) != (current.origin, current.destination):
        raise ToolError(
            f"Flight {new_flight_id} flies {new.origin}-{new.destination}, not {current.origin}-"
            f"{current.destination}; a change keeps the route (cancel and rebook to fly elsewhere)"
        )
    _require_bookable(ctx, new)
    for other_id in segments.keys() - {current_flight_id}:
        other = _get_flight(ctx, other_id)
        first, second = (new, other) if segment.seq == 1 else (other, new)
        if not _connects(first, second):
            raise ToolError("After the change the return would leave before the outbound flight lands")
    count = len(_travelers(ctx, reservation_id))
    new_price = _price(ctx, new_flight_id, fare)
    charge = 0
    if not waive_fees:
        charge = (fare.change_fee_cents + max(0, new_price - segment.fare_cents)) * count
        segment.fare_cents = max(segment.fare_cents, new_price)
    _move_seats(ctx, new_flight_id, segment.cabin, -count)
    if current.status != "cancelled":
        _move_seats(ctx, current_flight_id, segment.cabin, count)
    segment.flight_id = new_flight_id
    _charge(ctx, reservation, payment_method_id, "change", charge)
    return reservation_view(ctx, reservation)


@tool(kind="write")
def upgrade_to_business(ctx: ToolContext, reservation_id: str, payment_method_id: str) -> ReservationView:
    """Move a whole economy reservation, before travel, to the Business fare and cabin on all its flights.

    The system charges, per traveller and flight, today's Business price minus the fare already paid.
    Check the policy first: not every fare class may be upgraded.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        payment_method_id: the holder's card or voucher for the charge, e.g. "PM-10311".
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    if reservation.fare_class == "BUSINESS":
        raise ToolError(f"Reservation {reservation_id} is already Business")
    business = _get_fare(ctx, "BUSINESS")
    count = len(_travelers(ctx, reservation_id))
    charge = 0
    for segment, flight in _unflown(ctx, reservation, "upgraded"):
        price = _price(ctx, flight.flight_id, business)
        charge += max(0, price - segment.fare_cents) * count
        _move_seats(ctx, flight.flight_id, "business", -count)
        _move_seats(ctx, flight.flight_id, segment.cabin, count)
        segment.cabin = "business"
        segment.fare_cents = max(segment.fare_cents, price)
    reservation.fare_class = "BUSINESS"
    _charge(ctx, reservation, payment_method_id, "upgrade", charge)
    return reservation_view(ctx, reservation)


@tool(kind="write")
def update_traveler(
    ctx: ToolContext,
    reservation_id: str,
    traveler_id: str,
    first_name: str,
    last_name: str,
    date_of_birth: date,
) -> ReservationView:
    """Correct a traveller's name or date of birth on a reservation (the number of travellers never changes).

    Pass all three fields, changed or not.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        traveler_id: the traveller to correct, e.g. "TR-10880".
        first_name: corrected first name, e.g. "Amelia".
        last_name: corrected last name, e.g. "Walsh".
        date_of_birth: corrected date of birth, e.g. "1984-03-09".
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    traveler = _get_traveler(ctx, reservation, traveler_id)
    first, last = _clean_name(first_name, "first_name"), _clean_name(last_name, "last_name")
    for other in _travelers(ctx, reservation_id):
        if other.traveler_id != traveler_id and (other.first_name.lower(), other.last_name.lower()) == (
            first.lower(),
            last.lower(),
        ):
            raise ToolError(f"{first} {last} is already on reservation {reservation_id}")
    if (traveler.first_name, traveler.last_name, traveler.date_of_birth) == (first, last, date_of_birth):
        raise ToolError(f"Traveler {traveler_id} already has these details; nothing to change")
    traveler.first_name, traveler.last_name, traveler.date_of_birth = first, last, date_of_birth
    return reservation_view(ctx, reservation)


@tool(kind="write")
def cancel_reservation(
    ctx: ToolContext, reservation_id: str, refund_cents: int, reason: str
) -> ReservationView:
    """Cancel a whole reservation before travel and refund the amount the policy allows.

    The refund goes back to the payment method that paid the fares. Compute refund_cents from the
    policy (fare class, time before departure, disruptions); pass 0 when nothing is refundable. Partial
    cancellation (some travellers or one flight only) does not exist.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        refund_cents: the refund in cents, from 0 up to the ticket value, e.g. 18000 for $180.00.
        reason: the customer's reason in a few words.
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    pairs = _unflown(ctx, reservation, "cancelled")
    count = len(_travelers(ctx, reservation_id))
    ticket_value = sum(s.fare_cents for s, _ in pairs) * count
    if not 0 <= refund_cents <= ticket_value:
        raise ToolError(
            f"refund_cents must be between 0 and the ticket value {ticket_value}, not {refund_cents}"
        )
    for segment, flight in pairs:
        if flight.status != "cancelled":
            _move_seats(ctx, flight.flight_id, segment.cabin, count)
    reservation.status = "cancelled"
    reservation.cancelled_at = ctx.now
    reservation.cancel_reason = reason.strip()[:200]
    _refund_to_original(ctx, reservation, refund_cents)
    return reservation_view(ctx, reservation)
