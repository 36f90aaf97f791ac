"""Reservation tools: looking a trip up and booking a new one."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.fares import MAX_TRAVELERS
from env_server.domains.travel.models import FareClassCode, Flight, Reservation, Segment, Traveler
from env_server.domains.travel.tools._common import (
    _charge,
    _clean_name,
    _connects,
    _get_fare,
    _get_flight,
    _get_own_payment_method,
    _get_passenger,
    _get_reservation,
    _move_seats,
    _price,
    _require_bookable,
    _require_verified,
)
from env_server.domains.travel.tools._views import ReservationView, reservation_view


class TravelerInput(BaseModel):
    """A person to put on a new reservation, as on their passport."""

    first_name: str = Field(description='e.g. "Amelia"')
    last_name: str = Field(description='e.g. "Walsh"')
    date_of_birth: date = Field(description='e.g. "1984-03-09"')


@tool(kind="read")
def get_reservation(ctx: ToolContext, reservation_id: str) -> ReservationView:
    """Look up a reservation: holder, fare class, travellers, flights with status, bags, payments and reviews.

    Args:
        reservation_id: the reservation code, e.g. "RS-10417".
    """
    return reservation_view(ctx, _get_reservation(ctx, reservation_id))


def _itinerary(ctx: ToolContext, flight_ids: list[str]) -> list[Flight]:
    if not 1 <= len(flight_ids) <= 2:
        raise ToolError("A reservation has one flight (one way) or two (out and back)")
    flights = [_get_flight(ctx, fid) for fid in flight_ids]
    for flight in flights:
        _require_bookable(ctx, flight)
    if len(flights) == 2:
        out, back = flights
        if (back.origin, back.destination) != (out.destination, out.origin):
            raise ToolError(
                "The second flight must fly back from the first flight's destination to its origin"
            )
        if not _connects(out, back):
            raise ToolError("The return flight must leave at least an hour after the outbound flight lands")
    return flights


@tool(kind="write")
def book_reservation(
    ctx: ToolContext,
    holder_id: str,
    flight_ids: list[str],
    fare_class: FareClassCode,
    travelers: list[TravelerInput],
    payment_method_id: str,
) -> ReservationView:
    """Book a new one-way or round-trip reservation held by a verified passenger, and charge its fares.

    Every traveller gets the same fare class on every flight; the price is today's fare (see
    search_flights) times the number of travellers, charged to one of the holder's payment methods.
    Confirm flights, fare, travellers and total with the customer first.

    Args:
        holder_id: the verified passenger who books and will hold the reservation, e.g. "PX-10042".
        flight_ids: one flight ID for a one-way trip, or outbound then return, e.g. ["FL-10110", "FL-10167"].
        fare_class: "BASIC", "STANDARD", "FLEX" or "BUSINESS".
        travelers: the people flying (1 to 6), each with first_name, last_name and date_of_birth.
        payment_method_id: the holder's card or voucher, e.g. "PM-10311".
    """
    holder = _get_passenger(ctx, holder_id)
    _require_verified(ctx, holder_id)
    fare = _get_fare(ctx, fare_class)
    if not 1 <= len(travelers) <= MAX_TRAVELERS:
        raise ToolError(f"A reservation has 1 to {MAX_TRAVELERS} travellers, not {len(travelers)}")
    names = {
        (_clean_name(t.first_name, "first_name").lower(), _clean_name(t.last_name, "last_name").lower())
        for t in travelers
    }
    if len(names) != len(travelers):
        raise ToolError("The same traveller is listed twice")
    _get_own_payment_method(ctx, payment_method_id, holder_id)
    flights = _itinerary(ctx, flight_ids)
    reservation = Reservation(
        reservation_id=ctx.new_id("RS"),
        holder_id=holder_id,
        fare_class=fare.code,
        trip_type="round_trip" if len(flights) == 2 else "one_way",
        status="confirmed",
        booked_at=ctx.now,
    )
    ctx.session.add(reservation)
    for t in travelers:
        is_holder = (t.first_name.strip().lower(), t.last_name.strip().lower(), t.date_of_birth) == (
            holder.first_name.lower(),
            holder.last_name.lower(),
            holder.date_of_birth,
        )
        ctx.session.add(
            Traveler(
                traveler_id=ctx.new_id("TR"),
                reservation_id=reservation.reservation_id,
                passenger_id=holder_id if is_holder else None,
                first_name=t.first_name.strip(),
                last_name=t.last_name.strip(),
                date_of_birth=t.date_of_birth,
            )
        )
    total = 0
    for seq, flight in enumerate(flights, start=1):
        price = _price(ctx, flight.flight_id, fare)
        _move_seats(ctx, flight.flight_id, fare.cabin, -len(travelers))
        ctx.session.add(
            Segment(
                segment_id=ctx.new_id("SG"),
                reservation_id=reservation.reservation_id,
                seq=seq,
                flight_id=flight.flight_id,
                cabin=fare.cabin,
                fare_cents=price,
            )
        )
        total += price * len(travelers)
    ctx.session.flush()
    _charge(ctx, reservation, payment_method_id, "fare", total)
    return reservation_view(ctx, reservation)
