"""Helpers every travel tool area shares.

Lookups that raise the not-found `ToolError` once, the identity gate, money movements and the
reservation view.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, is_verified
from env_server.domains.travel.fares import MAX_AMOUNT_CENTS, MAX_NAME_LENGTH, fare_price_cents
from env_server.domains.travel.models import (
    FareClass,
    Flight,
    IdentityVerification,
    LoyaltyAccount,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    SeatInventory,
    Segment,
    Traveler,
)

#: Statuses of a flight that has left the gate: it can no longer be changed, cancelled or have bags added.
FLOWN = ("departed", "landed")


def _get_passenger(ctx: ToolContext, passenger_id: str) -> Passenger:
    return ctx.get_or_refuse(Passenger, passenger_id, f"Passenger {passenger_id} not found")


def _get_reservation(ctx: ToolContext, reservation_id: str) -> Reservation:
    return ctx.get_or_refuse(Reservation, reservation_id, f"Reservation {reservation_id} not found")


def _get_flight(ctx: ToolContext, flight_id: str) -> Flight:
    return ctx.get_or_refuse(Flight, flight_id, f"Flight {flight_id} not found")


def _require_bookable(ctx: ToolContext, flight: Flight) -> None:
    """Refuse a flight that is not open for sale: cancelled, departed, landed, or already gone."""
    if flight.status not in ("scheduled", "delayed") or flight.departure_at <= ctx.now:
        raise ToolError(f"Flight {flight.flight_id} is {flight.status}; it cannot be booked")


def _connects(first: Flight, second: Flight) -> bool:
    """Whether `second` leaves at least an hour after `first` lands (its current delay included)."""
    return second.departure_at >= first.arrival_at + timedelta(minutes=first.delay_minutes + 60)


def _get_fare(ctx: ToolContext, code: str) -> FareClass:
    return ctx.get_or_refuse(
        FareClass, code, f"Fare class {code} not found (valid: BASIC, STANDARD, FLEX, BUSINESS)"
    )


def _get_loyalty(ctx: ToolContext, passenger_id: str) -> LoyaltyAccount:
    account = ctx.session.scalars(
        select(LoyaltyAccount).where(LoyaltyAccount.passenger_id == passenger_id)
    ).one_or_none()
    if account is None:
        raise ToolError(f"Passenger {passenger_id} has no loyalty account")
    return account


def _no_cabin(flight_id: str, cabin: str) -> str:
    """The refusal for a cabin a flight does not have (one wording for every tool that meets it)."""
    return f"Flight {flight_id} has no {cabin} cabin"


def _get_inventory(ctx: ToolContext, flight_id: str, cabin: str) -> SeatInventory:
    return ctx.get_or_refuse(SeatInventory, (flight_id, cabin), _no_cabin(flight_id, cabin))


def _get_traveler(ctx: ToolContext, reservation: Reservation, traveler_id: str) -> Traveler:
    return ctx.get_or_refuse(
        Traveler,
        traveler_id,
        f"Traveler {traveler_id} is not on reservation {reservation.reservation_id}",
        where=lambda traveler: traveler.reservation_id == reservation.reservation_id,
    )


def _get_own_payment_method(ctx: ToolContext, payment_method_id: str | None, owner_id: str) -> PaymentMethod:
    if payment_method_id is None:
        raise ToolError("A payment method is required: this operation costs money")
    return ctx.get_or_refuse(
        PaymentMethod,
        payment_method_id,
        f"Payment method {payment_method_id} does not belong to passenger {owner_id}",
        where=lambda method: method.passenger_id == owner_id,
    )


def _check_amount(name: str, value: int, *, positive: bool = True) -> None:
    """Refuse negative (or zero, when `positive`) and absurdly large amounts with a `ToolError`."""
    low = 1 if positive else 0
    if not low <= value <= MAX_AMOUNT_CENTS:
        raise ToolError(f"{name} must be between {low} and {MAX_AMOUNT_CENTS} cents, not {value}")


def _clean_name(value: str, field: str) -> str:
    """A stripped traveller name, refused when empty or longer than the system stores."""
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise ToolError(f"{field} must have 1 to {MAX_NAME_LENGTH} characters, not {value!r}")
    return name


def _require_verified(ctx: ToolContext, passenger_id: str) -> None:
    if not is_verified(ctx, IdentityVerification.passenger_id, passenger_id):
        raise ToolError(
            f"Passenger {passenger_id} has not been verified in this conversation; "
            "call verify_passenger_identity with the holder's details first"
        )


def _get_writable_reservation(ctx: ToolContext, reservation_id: str) -> Reservation:
    """A confirmed reservation whose holder is verified: the precondition of every change."""
    reservation = _get_reservation(ctx, reservation_id)
    _require_verified(ctx, reservation.holder_id)
    if reservation.status != "confirmed":
        raise ToolError(f"Reservation {reservation_id} is {reservation.status}; it cannot be changed")
    return reservation


def _travelers(ctx: ToolContext, reservation_id: str) -> list[Traveler]:
    return list(
        ctx.session.scalars(
            select(Traveler).where(Traveler.reservation_id == reservation_id).order_by(Traveler.traveler_id)
        )
    )


def _segments(ctx: ToolContext, reservation_id: str) -> list[Segment]:
    return list(
        ctx.session.scalars(
            select(Segment).where(Segment.reservation_id == reservation_id).order_by(Segment.seq)
        )
    )


def _price(ctx: ToolContext, flight_id: str, fare: FareClass) -> int:
    """Today's price of one seat of `fare` on a flight."""
    return fare_price_cents(_get_inventory(ctx, flight_id, fare.cabin).base_price_cents, fare.price_pct)


def _move_seats(ctx: ToolContext, flight_id: str, cabin: str, delta: int) -> None:
    """Sell (`delta` < 0) or release (`delta` > 0) seats; selling more than are left is refused."""
    inventory = _get_inventory(ctx, flight_id, cabin)
    if inventory.seats_available + delta < 0:
        raise ToolError(
            f"Flight {flight_id} has only {inventory.seats_available} {cabin} seats left; {-delta} needed"
        )
    inventory.seats_available = min(inventory.seats_total, inventory.seats_available + delta)


def _charge(
    ctx: ToolContext, reservation: Reservation, payment_method_id: str | None, purpose: str, amount_cents: int
) -> None:
    """Collect `amount_cents` from one of the holder's payment methods; nothing happens for a zero amount."""
    if amount_cents <= 0:
        return
    method = _get_own_payment_method(ctx, payment_method_id, reservation.holder_id)
    if method.kind == "voucher":
        balance = method.balance_cents or 0
        if method.expires_on is not None and method.expires_on < ctx.now.date():
            raise ToolError(f"Voucher {method.payment_method_id} expired on {method.expires_on}")
        if balance < amount_cents:
            raise ToolError(
                f"Voucher {method.payment_method_id} holds {balance} cents; "
                f"{amount_cents} are needed (a voucher must cover the whole amount)"
            )
        method.balance_cents = balance - amount_cents
    _record_payment(ctx, reservation, method.payment_method_id, "charge", purpose, amount_cents)


def _record_payment(
    ctx: ToolContext,
    reservation: Reservation,
    payment_method_id: str,
    direction: str,
    purpose: str,
    amount_cents: int,
) -> None:
    """Record money moved for `reservation`: a charge to, or a refund onto, `payment_method_id`."""
    ctx.session.add(
        Payment(
            payment_id=ctx.new_id("PY"),
            reservation_id=reservation.reservation_id,
            payment_method_id=payment_method_id,
            direction=direction,
            purpose=purpose,
            amount_cents=amount_cents,
            created_at=ctx.now,
        )
    )


def _refund_to_original(ctx: ToolContext, reservation: Reservation, amount_cents: int) -> None:
    """Refund onto the payment method that paid the fares (a voucher gets its balance back)."""
    if amount_cents <= 0:
        return
    original = ctx.session.scalars(
        select(Payment)
        .where(Payment.reservation_id == reservation.reservation_id, Payment.purpose == "fare")
        .order_by(Payment.payment_id)
    ).first()
    if original is None:
        raise ToolError(f"Reservation {reservation.reservation_id} has no fare payment to refund")
    method = ctx.session.get(PaymentMethod, original.payment_method_id)
    if method is not None and method.kind == "voucher" and method.balance_cents is not None:
        method.balance_cents += amount_cents
    _record_payment(
        ctx, reservation, original.payment_method_id, "refund", "cancellation_refund", amount_cents
    )


def _require_flight_on(ctx: ToolContext, reservation_id: str, flight_id: str) -> None:
    """Refuse a flight that is not one of the reservation's segments."""
    on_reservation = ctx.session.scalars(
        select(Segment.segment_id).where(
            Segment.reservation_id == reservation_id, Segment.flight_id == flight_id
        )
    ).first()
    if on_reservation is None:
        raise ToolError(f"Flight {flight_id} is not on reservation {reservation_id}")
