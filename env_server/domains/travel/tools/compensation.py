"""Compensation tools: vouchers for disrupted flights, and holds for a supervisor's decision."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.models import Compensation, PaymentMethod, SupervisorReview
from env_server.domains.travel.tools._common import (
    _check_amount,
    _get_reservation,
    _require_flight_on,
    _require_verified,
)
from env_server.domains.travel.tools._views import CompensationView, ReviewView

#: How long a compensation voucher stays valid.
VOUCHER_VALIDITY = timedelta(days=365)


@tool(kind="write")
def issue_compensation(
    ctx: ToolContext, reservation_id: str, flight_id: str, amount_cents: int
) -> CompensationView:
    """Compensate a reservation for a disrupted flight with a travel voucher in the holder's name.

    Only for disruptions the policy makes eligible, for the amount it sets (all travellers together), and
    at most once per reservation and flight. Amounts above the policy's limit go to
    request_supervisor_review instead.

    Args:
        reservation_id: the reservation, e.g. "RS-10417".
        flight_id: the disrupted flight of that reservation, e.g. "FL-10110".
        amount_cents: the voucher amount in cents, e.g. 25000 for $250.00.
    """
    reservation = _get_reservation(ctx, reservation_id)
    _require_verified(ctx, reservation.holder_id)
    _require_flight_on(ctx, reservation_id, flight_id)
    _check_amount("amount_cents", amount_cents)
    existing = ctx.session.scalars(
        select(Compensation).where(
            Compensation.reservation_id == reservation_id, Compensation.flight_id == flight_id
        )
    ).first()
    if existing is not None:
        raise ToolError(
            f"Reservation {reservation_id} was already compensated for flight {flight_id} "
            f"({existing.compensation_id}, {existing.amount_cents} cents)"
        )
    voucher = PaymentMethod(
        payment_method_id=ctx.new_id("PM"),
        passenger_id=reservation.holder_id,
        kind="voucher",
        balance_cents=amount_cents,
        expires_on=ctx.now.date() + VOUCHER_VALIDITY,
    )
    ctx.session.add(voucher)
    compensation = Compensation(
        compensation_id=ctx.new_id("CP"),
        reservation_id=reservation_id,
        flight_id=flight_id,
        amount_cents=amount_cents,
        voucher_id=voucher.payment_method_id,
        issued_at=ctx.now,
    )
    ctx.session.add(compensation)
    return CompensationView.of(compensation)


@tool(kind="write")
def request_supervisor_review(
    ctx: ToolContext,
    reservation_id: str,
    category: Literal["compensation", "refund_exception"],
    amount_cents: int,
    summary: str,
) -> ReviewView:
    """Put a request on hold for a supervisor instead of granting it; the customer hears back later.

    Use only where the policy says a supervisor decides. Nothing is paid or changed now.

    Args:
        reservation_id: the reservation concerned, e.g. "RS-10417".
        category: "compensation" (above the agent's limit) or "refund_exception" (a refund the fare rules
            do not grant, e.g. for illness or bereavement).
        amount_cents: the amount the supervisor is asked to grant, in cents, e.g. 60000.
        summary: one or two sentences on the request and why it is held.
    """
    reservation = _get_reservation(ctx, reservation_id)
    _require_verified(ctx, reservation.holder_id)
    _check_amount("amount_cents", amount_cents)
    if not summary.strip():
        raise ToolError("summary must say what is requested and why")
    review = SupervisorReview(
        review_id=ctx.new_id("SR"),
        reservation_id=reservation_id,
        category=category,
        amount_cents=amount_cents,
        status="pending",
        summary=summary.strip()[:500],
        created_at=ctx.now,
    )
    ctx.session.add(review)
    return ReviewView.of(review)
