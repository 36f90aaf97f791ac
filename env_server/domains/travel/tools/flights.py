"""Flight tools: schedules, status, fares on sale, fare rules and status alerts."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Literal

from sqlalchemy import Row, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.fares import alert_contact, fare_price_cents
from env_server.domains.travel.models import FareClass, Flight, FlightAlert, SeatInventory
from env_server.domains.travel.tools._common import _get_flight, _no_cabin
from env_server.domains.travel.tools._views import (
    FareClassView,
    FareOffer,
    FlightAlertView,
    FlightOption,
    FlightView,
)

# The search is the heaviest read of the domain (a fare per flight and fare class): three column selects
# returning rows, the seats of all found flights at once, instead of ORM objects and a lookup per fare.
_FLIGHTS = select(
    Flight.flight_id,
    Flight.flight_number,
    Flight.origin,
    Flight.destination,
    Flight.departure_at,
    Flight.arrival_at,
    Flight.distance_miles,
    Flight.status,
    Flight.delay_minutes,
    Flight.disruption_cause,
)
_FARES = select(FareClass.code, FareClass.cabin, FareClass.price_pct).order_by(
    FareClass.cabin.desc(), FareClass.price_pct
)
_SEATS = select(
    SeatInventory.flight_id,
    SeatInventory.cabin,
    SeatInventory.seats_available,
    SeatInventory.base_price_cents,
)


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day)
    return start, start + timedelta(days=1)


@tool(kind="read")
def search_flights(ctx: ToolContext, origin: str, destination: str, date: date) -> list[FlightOption]:
    """Find the flights between two airports departing on one date, with today's fares and free seats.

    Prices are per traveller. Cancelled flights are listed (so you can explain them) but cannot be booked.

    Args:
        origin: departure airport code, e.g. "JFK".
        destination: arrival airport code, e.g. "LAX".
        date: departure date (UTC), e.g. "2026-10-05".
    """
    start, end = _day_bounds(date)
    flights = ctx.session.execute(
        _FLIGHTS.where(
            Flight.origin == origin.strip().upper(),
            Flight.destination == destination.strip().upper(),
            Flight.departure_at >= start,
            Flight.departure_at < end,
        ).order_by(Flight.departure_at)
    ).all()
    fares = ctx.session.execute(_FARES).all()
    seats = {
        (row.flight_id, row.cabin): row
        for row in ctx.session.execute(
            _SEATS.where(SeatInventory.flight_id.in_([f.flight_id for f in flights]))
        )
    }

    def offer(flight_id: str, fare: Row) -> FareOffer:
        inventory = seats.get((flight_id, fare.cabin))
        if inventory is None:
            raise ToolError(_no_cabin(flight_id, fare.cabin))
        return FareOffer(
            fare_class=fare.code,
            cabin=fare.cabin,
            price_cents=fare_price_cents(inventory.base_price_cents, fare.price_pct),
            seats_available=inventory.seats_available,
        )

    return [FlightOption.of(f, fares=[offer(f.flight_id, fare) for fare in fares]) for f in flights]


@tool(kind="read")
def get_flight_status(ctx: ToolContext, flight_number: str, date: date) -> FlightView:
    """Get a flight's status on a date: scheduled, delayed, cancelled, departed or landed, and its delay.

    Args:
        flight_number: the flight number, e.g. "GS101".
        date: the scheduled departure date (UTC), e.g. "2026-09-29".
    """
    start, end = _day_bounds(date)
    number = flight_number.replace(" ", "").upper()
    flight = ctx.session.scalars(
        select(Flight).where(
            Flight.flight_number == number, Flight.departure_at >= start, Flight.departure_at < end
        )
    ).first()
    if flight is None:
        raise ToolError(f"No flight {number} departs on {date.isoformat()}")
    return FlightView.of(flight)


@tool(kind="read")
def get_fare_rules(ctx: ToolContext) -> list[FareClassView]:
    """List the fare classes with their change fees, refund percentages, free bags and miles rates."""
    return [FareClassView.of(f) for f in ctx.session.scalars(select(FareClass).order_by(FareClass.code))]


@tool(kind="write")
def subscribe_flight_alerts(
    ctx: ToolContext, flight_id: str, channel: Literal["email", "sms"], contact: str
) -> FlightAlertView:
    """Subscribe an email address or phone number to status messages about one flight.

    Anyone may subscribe (no identity verification needed); only flights that have not landed qualify.

    Args:
        flight_id: the flight, e.g. "FL-10240" (from search_flights, get_flight_status or a reservation).
        channel: "email" or "sms".
        contact: the address or phone number, e.g. "+1-415-555-0182" (stored in a canonical form).
    """
    flight = _get_flight(ctx, flight_id)
    if flight.status in ("landed", "cancelled"):
        raise ToolError(f"Flight {flight_id} is {flight.status}; alerts are only for upcoming flights")
    contact = alert_contact(channel, contact)
    if not 2 <= len(contact) <= 120:
        raise ToolError(f"contact must be an email address or phone number, not {contact!r}")
    existing = ctx.session.scalars(
        select(FlightAlert).where(FlightAlert.flight_id == flight_id, FlightAlert.contact == contact)
    ).first()
    if existing is not None:
        raise ToolError(f"{contact} is already subscribed to flight {flight_id} ({existing.alert_id})")
    alert = FlightAlert(
        alert_id=ctx.new_id("FA"), flight_id=flight_id, channel=channel, contact=contact, created_at=ctx.now
    )
    ctx.session.add(alert)
    return FlightAlertView.of(alert)
