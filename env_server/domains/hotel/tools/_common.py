"""Helpers every hotel tool shares.

Lookups that raise the not-found `ToolError` once, the identity gate, status checks, and the inventory and
payment mechanics of a booking change.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, is_verified
from env_server.domains.hotel.models import (
    Booking,
    BookingStatus,
    CorporateAccount,
    Guest,
    IdentityVerification,
    Payment,
    PaymentKind,
    PaymentPurpose,
    RoomNight,
    RoomType,
)
from env_server.domains.hotel.pricing import CHANGE_FEE_CENTS, stay_nights, stay_price_cents

#: The longest stay one booking may hold.
MAX_NIGHTS = 14


def require_verified(ctx: ToolContext, *guest_ids: str) -> None:
    """Refuse unless one of `guest_ids` passed identity verification in this conversation."""
    if not is_verified(ctx, IdentityVerification.guest_id, *guest_ids):
        who = " or ".join(sorted(set(guest_ids)))
        raise ToolError(f"Not verified: verify the identity of {who} with verify_guest_identity first")


def coordinators(ctx: ToolContext, account_id: str | None) -> set[str]:
    """The travel coordinators of a corporate account (none for a private booking)."""
    if account_id is None:
        return set()
    rows = ctx.session.scalars(
        select(Guest.guest_id).where(
            Guest.corporate_account_id == account_id, Guest.corporate_role == "coordinator"
        )
    )
    return set(rows)


def require_booking_authority(ctx: ToolContext, booking: Booking, acting_guest_id: str | None = None) -> None:
    """Refuse unless a verified person may act on `booking`: its guest, or a coordinator of its account.

    Args:
        ctx: the tool context.
        booking: the booking to be changed.
        acting_guest_id: who asks, when the tool records it; otherwise any verified authorised person.
    """
    allowed = {booking.guest_id} | coordinators(ctx, booking.corporate_account_id)
    if acting_guest_id is None:
        require_verified(ctx, *allowed)
        return
    if acting_guest_id not in allowed:
        raise ToolError(
            f"Guest {acting_guest_id} may not act on booking {booking.booking_id}: only its guest "
            "or a travel coordinator of its corporate account may"
        )
    require_verified(ctx, acting_guest_id)


def require_status(booking: Booking, *allowed: BookingStatus) -> None:
    """Refuse unless the booking is in one of the `allowed` states."""
    if booking.status not in allowed:
        wanted = " or ".join(allowed)
        raise ToolError(f"Booking {booking.booking_id} is {booking.status}; this needs a {wanted} booking")


def validate_stay(ctx: ToolContext, check_in: date, check_out: date) -> None:
    """Refuse stays that are empty, too long, or start in the past."""
    today = ctx.now.date()
    if check_out <= check_in:
        raise ToolError(f"Check-out {check_out} must be after check-in {check_in}")
    if (check_out - check_in).days > MAX_NIGHTS:
        raise ToolError(f"A booking covers at most {MAX_NIGHTS} nights")
    if check_in < today:
        raise ToolError(f"Check-in {check_in} is in the past (today is {today})")


def price_stay(
    ctx: ToolContext,
    room_type_id: str,
    check_in: date,
    check_out: date,
    *,
    rate_plan: str,
    discount_pct: int,
    held_by: Booking | None = None,
) -> tuple[int, list[RoomNight]]:
    """Price a stay from the nightly inventory and check a room is free every night.

    Args:
        ctx: the tool context.
        room_type_id: the room type to stay in.
        check_in: arrival date.
        check_out: departure date.
        rate_plan: "flexible" or "non_refundable".
        discount_pct: the corporate discount, or 0.
        held_by: a booking being changed; the nights it already holds count as free.

    Returns:
        The room total in cents and the inventory rows of the nights.
    """
    nights = stay_nights(check_in, check_out)
    rows = {
        r.night: r
        for r in ctx.session.scalars(
            select(RoomNight).where(
                RoomNight.room_type_id == room_type_id,
                RoomNight.night >= check_in,
                RoomNight.night < check_out,
            )
        )
    }
    held = set()
    if held_by is not None and held_by.room_type_id == room_type_id:
        held = set(stay_nights(held_by.check_in, held_by.check_out))
    for night in nights:
        row = rows.get(night)
        if row is None:
            raise ToolError(
                f"Rates for {room_type_id} are not loaded for the night of {night}; it cannot be sold"
            )
        if row.rooms_available == 0 and night not in held:
            raise ToolError(f"{room_type_id} is sold out on the night of {night}")
    ordered = [rows[n] for n in nights]
    total = stay_price_cents([r.rate_cents for r in ordered], rate_plan=rate_plan, discount_pct=discount_pct)
    return total, ordered


def discount_of(ctx: ToolContext, booking: Booking) -> int:
    """The corporate discount a booking is priced with (0 for private bookings)."""
    if booking.corporate_account_id is None:
        return 0
    return CorporateAccount.get_or_refuse(ctx.session, booking.corporate_account_id).discount_pct


def release_nights(ctx: ToolContext, booking: Booking) -> None:
    """Give the booking's nights back to the inventory (nights outside the loaded window are skipped)."""
    for night in stay_nights(booking.check_in, booking.check_out):
        row = ctx.session.get(RoomNight, (booking.room_type_id, night))
        if row is not None:
            row.rooms_available += 1


def take_nights(rows: list[RoomNight]) -> None:
    """Take one room from each night's inventory."""
    for row in rows:
        row.rooms_available -= 1


def record_payment(
    ctx: ToolContext, booking: Booking, kind: PaymentKind, purpose: PaymentPurpose, amount_cents: int
) -> Payment:
    """Charge or refund the booking's payment method."""
    payment = Payment(
        payment_id=ctx.new_id("PAY"),
        booking_id=booking.booking_id,
        payment_method_id=booking.payment_method_id,
        kind=kind,
        purpose=purpose,
        amount_cents=amount_cents,
        created_at=ctx.now,
    )
    ctx.session.add(payment)
    return payment


def settle_difference(ctx: ToolContext, booking: Booking, new_total_cents: int) -> None:
    """Charge or refund the difference between the booking's total and `new_total_cents`, and store it."""
    difference = new_total_cents - booking.room_total_cents
    if difference > 0:
        record_payment(ctx, booking, "charge", "price_difference", difference)
    elif difference < 0:
        record_payment(ctx, booking, "refund", "price_difference", -difference)
    booking.room_total_cents = new_total_cents


def require_same_hotel(ctx: ToolContext, booking: Booking, room_type_id: str) -> RoomType:
    """The room type `room_type_id`, refused unless it is at the booking's hotel."""
    new_room = RoomType.get_or_refuse(ctx.session, room_type_id)
    if new_room.hotel_id != RoomType.get_or_refuse(ctx.session, booking.room_type_id).hotel_id:
        raise ToolError(f"Room type {room_type_id} is at another hotel; a booking stays at its hotel")
    return new_room


def move_booking(
    ctx: ToolContext,
    booking: Booking,
    nights: list[RoomNight],
    new_total_cents: int,
    *,
    charge_change_fee: bool,
) -> None:
    """Move the booking's inventory to `nights`, settle the price difference, and charge the fee if asked.

    The caller then stores the booking's new dates or room type.
    """
    release_nights(ctx, booking)
    take_nights(nights)
    settle_difference(ctx, booking, new_total_cents)
    if charge_change_fee:
        record_payment(ctx, booking, "charge", "change_fee", CHANGE_FEE_CENTS)
