"""Baggage tools: checked bags for the travellers of a reservation."""

from __future__ import annotations

from sqlalchemy import func, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.fares import EXTRA_BAG_FEE_CENTS, MAX_BAGS_PER_TRAVELER
from env_server.domains.travel.models import Baggage
from env_server.domains.travel.tools._common import (
    _charge,
    _get_flight,
    _get_traveler,
    _get_writable_reservation,
    _segments,
)
from env_server.domains.travel.tools._views import ReservationView, reservation_view


@tool(kind="write")
def add_checked_bags(
    ctx: ToolContext,
    reservation_id: str,
    traveler_id: str,
    quantity: int,
    fee_cents: int,
    payment_method_id: str | None = None,
) -> ReservationView:
    """Add checked bags for one traveller of a reservation and charge the fee you computed from the policy.

    Bags cover the whole trip. Count the traveller's bags already on the reservation against their free
    allowance (fare class plus the holder's loyalty tier) and charge only the bags beyond it.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        traveler_id: the traveller the bags belong to, e.g. "TR-10880".
        quantity: bags to add, 1 to 4 (a traveller may have at most 4 in all).
        fee_cents: the fee for these bags in cents, 0 when they are all within the allowance, e.g. 5000.
        payment_method_id: the holder's card or voucher for the fee, e.g. "PM-10311"; may be omitted when
            the fee is 0.
    """
    reservation = _get_writable_reservation(ctx, reservation_id)
    traveler = _get_traveler(ctx, reservation, traveler_id)
    if not 1 <= quantity <= MAX_BAGS_PER_TRAVELER:
        raise ToolError(f"quantity must be between 1 and {MAX_BAGS_PER_TRAVELER}, not {quantity}")
    if not 0 <= fee_cents <= quantity * EXTRA_BAG_FEE_CENTS:
        raise ToolError(
            f"fee_cents must be between 0 and {quantity * EXTRA_BAG_FEE_CENTS} for {quantity} bags, "
            f"not {fee_cents}"
        )
    flights = [_get_flight(ctx, s.flight_id) for s in _segments(ctx, reservation_id)]
    if all(f.status in ("departed", "landed", "cancelled") for f in flights):
        raise ToolError(f"Reservation {reservation_id} has no flight left to check bags onto")
    checked = (
        ctx.session.scalar(
            select(func.coalesce(func.sum(Baggage.quantity), 0)).where(Baggage.traveler_id == traveler_id)
        )
        or 0
    )
    if checked + quantity > MAX_BAGS_PER_TRAVELER:
        raise ToolError(
            f"Traveler {traveler_id} already has {checked} checked bags; "
            f"at most {MAX_BAGS_PER_TRAVELER} are allowed"
        )
    ctx.session.add(
        Baggage(
            bag_id=ctx.new_id("BG"),
            reservation_id=reservation_id,
            traveler_id=traveler.traveler_id,
            quantity=quantity,
            fee_cents=fee_cents,
        )
    )
    _charge(ctx, reservation, payment_method_id, "baggage", fee_cents)
    return reservation_view(ctx, reservation)
