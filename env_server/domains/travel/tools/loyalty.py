"""Loyalty tools: a member's account and miles missing from a flight they flew."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.fares import flight_miles
from env_server.domains.travel.models import MileageTransaction
from env_server.domains.travel.tools._common import (
    _get_fare,
    _get_flight,
    _get_loyalty,
    _get_passenger,
    _get_writable_reservation,
    _require_flight_on,
)
from env_server.domains.travel.tools._views import LoyaltyDetails, MileageView


@tool(kind="read")
def get_loyalty_account(ctx: ToolContext, passenger_id: str) -> LoyaltyDetails:
    """Look up a passenger's loyalty account: tier, miles balance and mileage history (newest first).

    Args:
        passenger_id: the member's passenger ID, e.g. "PX-10042".
    """
    _get_passenger(ctx, passenger_id)
    account = _get_loyalty(ctx, passenger_id)
    transactions = ctx.session.scalars(
        select(MileageTransaction)
        .where(MileageTransaction.loyalty_id == account.loyalty_id)
        .order_by(MileageTransaction.created_at.desc(), MileageTransaction.transaction_id.desc())
    )
    return LoyaltyDetails.of(account, transactions=list(transactions))


@tool(kind="write")
def credit_missing_miles(ctx: ToolContext, reservation_id: str, flight_id: str) -> MileageView:
    """Credit the holder's loyalty account with the miles of a landed flight of their reservation.

    The system computes the miles (distance times the fare's miles rate) and refuses flights already
    credited. Check the policy first: miles are only for the holder's own travel.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        flight_id: the landed flight whose miles are missing, e.g. "FL-10110".
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    _require_flight_on(ctx, reservation_id, flight_id)
    flight = _get_flight(ctx, flight_id)
    if flight.status != "landed":
        raise ToolError(f"Flight {flight_id} is {flight.status}; miles are credited only once it has landed")
    account = _get_loyalty(ctx, reservation.holder_id)
    credited = ctx.session.scalars(
        select(MileageTransaction.transaction_id).where(
            MileageTransaction.loyalty_id == account.loyalty_id,
            MileageTransaction.reservation_id == reservation_id,
            MileageTransaction.flight_id == flight_id,
        )
    ).first()
    if credited is not None:
        raise ToolError(
            f"Flight {flight_id} of reservation {reservation_id} was already credited ({credited})"
        )
    miles = flight_miles(flight.distance_miles, _get_fare(ctx, reservation.fare_class).miles_pct)
    account.miles_balance += miles
    txn = MileageTransaction(
        transaction_id=ctx.new_id("MT"),
        loyalty_id=account.loyalty_id,
        reservation_id=reservation_id,
        flight_id=flight_id,
        kind="missing_miles",
        miles=miles,
        created_at=ctx.now,
    )
    ctx.session.add(txn)
    return MileageView.of(txn)
