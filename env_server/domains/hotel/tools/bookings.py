"""Booking tools: look up, quote, create, change and cancel bookings, and add extras.

Each write checks what the booking system itself enforces (identity, booking state, availability, room
capacity). Policy decisions — refund percentage, change fee, complimentary extras, whether a corporate change
needs approval instead — are the agent's, passed in as arguments.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.hotel.models import (
    Booking,
    BookingExtra,
    CorporateAccount,
    ExtraKind,
    Guest,
    PaymentMethod,
    RatePlan,
    RoomType,
)
from env_server.domains.hotel.pricing import extra_price_cents
from env_server.domains.hotel.tools._common import (
    coordinators,
    discount_of,
    move_booking,
    price_stay,
    record_payment,
    release_nights,
    require_booking_authority,
    require_same_hotel,
    require_status,
    require_verified,
    take_nights,
    validate_stay,
)
from env_server.domains.hotel.tools._views import BookingView, ChangeQuote, booking_view

RefundPercent = Literal[0, 50, 100]


@tool(kind="read")
def get_booking(ctx: ToolContext, booking_id: str) -> BookingView:
    """Show a booking: guest, hotel and tier, room, dates, rate plan, total, extras, payments and approvals.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
    """
    return booking_view(ctx, Booking.get_or_refuse(ctx.session, booking_id))


@tool(kind="read")
def quote_booking_change(
    ctx: ToolContext,
    booking_id: str,
    check_in: date | None = None,
    check_out: date | None = None,
    room_type_id: str | None = None,
) -> ChangeQuote:
    """Price a change of dates and/or room type without making it; change fees are not included.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
        check_in: the new arrival date, e.g. "2026-10-14"; omit to keep the current one.
        check_out: the new departure date, e.g. "2026-10-16"; omit to keep the current one.
        room_type_id: the new room type at the same hotel, e.g. "RT-03-DLX"; omit to keep the current one.
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    new_in, new_out = check_in or booking.check_in, check_out or booking.check_out
    new_room = require_same_hotel(ctx, booking, room_type_id or booking.room_type_id)
    validate_stay(ctx, new_in, new_out)
    total, _ = price_stay(
        ctx,
        new_room.room_type_id,
        new_in,
        new_out,
        rate_plan=booking.rate_plan,
        discount_pct=discount_of(ctx, booking),
        held_by=booking,
    )
    return ChangeQuote(
        booking_id=booking_id,
        room_type_id=new_room.room_type_id,
        check_in=new_in,
        check_out=new_out,
        current_total_cents=booking.room_total_cents,
        new_total_cents=total,
        difference_cents=total - booking.room_total_cents,
    )


@tool(kind="write")
def create_booking(
    ctx: ToolContext,
    guest_id: str,
    room_type_id: str,
    check_in: date,
    check_out: date,
    adults: int,
    rate_plan: RatePlan,
    payment_method_id: str,
    corporate_account_id: str | None = None,
) -> BookingView:
    """Book a room for a guest and charge the room total now.

    The person you talk to must be verified: the guest who will stay, or for a corporate booking a travel
    coordinator of the account. Private bookings are paid by one of the guest's cards; corporate bookings
    are flexible and paid by the account's invoice payment method.

    Args:
        guest_id: the guest who will stay, e.g. "G-1042".
        room_type_id: the room type, e.g. "RT-03-DLX" (see search_availability).
        check_in: arrival date, e.g. "2026-10-14".
        check_out: departure date, e.g. "2026-10-16".
        adults: adults staying in the room, at most the room type's max occupancy.
        rate_plan: "flexible" or "non_refundable" (10% cheaper, no refund and no changes).
        payment_method_id: the card or corporate invoice to charge, e.g. "PM-1107".
        corporate_account_id: for a corporate-rate booking, the account, e.g. "CA-02"; omit otherwise.
    """
    guest = Guest.get_or_refuse(ctx.session, guest_id)
    room_type = RoomType.get_or_refuse(ctx.session, room_type_id)
    validate_stay(ctx, check_in, check_out)
    if not 1 <= adults <= room_type.max_occupancy:
        raise ToolError(
            f"{room_type.name} ({room_type_id}) sleeps 1 to {room_type.max_occupancy} adults, not {adults}"
        )
    method = PaymentMethod.get_or_refuse(ctx.session, payment_method_id)
    discount = 0
    if corporate_account_id is not None:
        discount = CorporateAccount.get_or_refuse(ctx.session, corporate_account_id).discount_pct
        if rate_plan != "flexible":
            raise ToolError("Corporate bookings use the flexible rate plan")
        if method.corporate_account_id != corporate_account_id:
            raise ToolError(
                f"A corporate booking is paid by the invoice payment method of {corporate_account_id}"
            )
        allowed = {guest.guest_id} | coordinators(ctx, corporate_account_id)
    else:
        if method.guest_id != guest.guest_id:
            raise ToolError(f"Payment method {payment_method_id} is not a card of guest {guest_id}")
        allowed = {guest.guest_id}
    require_verified(ctx, *allowed)
    total, nights = price_stay(
        ctx, room_type_id, check_in, check_out, rate_plan=rate_plan, discount_pct=discount
    )
    booking = Booking(
        booking_id=ctx.new_id("BK"),
        guest_id=guest_id,
        room_type_id=room_type_id,
        corporate_account_id=corporate_account_id,
        payment_method_id=payment_method_id,
        check_in=check_in,
        check_out=check_out,
        adults=adults,
        rate_plan=rate_plan,
        status="confirmed",
        room_total_cents=total,
        created_at=ctx.now,
    )
    ctx.session.add(booking)
    take_nights(nights)
    record_payment(ctx, booking, "charge", "room", total)
    return booking_view(ctx, booking)


@tool(kind="write")
def change_booking_dates(
    ctx: ToolContext, booking_id: str, check_in: date, check_out: date, charge_change_fee: bool
) -> BookingView:
    """Move a confirmed booking to new dates in the same room type, settling the price difference.

    The new nights are priced at the current rates (with the booking's plan or corporate discount); the
    difference is charged to, or refunded onto, the booking's payment method. Check the policy first: some
    bookings must not be changed, and some changes need manager approval instead.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
        check_in: the new arrival date, e.g. "2026-10-14".
        check_out: the new departure date, e.g. "2026-10-16".
        charge_change_fee: true to charge the change fee the policy sets, false when the policy waives it.
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    require_booking_authority(ctx, booking)
    require_status(booking, "confirmed")
    validate_stay(ctx, check_in, check_out)
    if (check_in, check_out) == (booking.check_in, booking.check_out):
        raise ToolError(f"Booking {booking_id} already runs from {check_in} to {check_out}")
    total, nights = price_stay(
        ctx,
        booking.room_type_id,
        check_in,
        check_out,
        rate_plan=booking.rate_plan,
        discount_pct=discount_of(ctx, booking),
        held_by=booking,
    )
    move_booking(ctx, booking, nights, total, charge_change_fee=charge_change_fee)
    booking.check_in, booking.check_out = check_in, check_out
    return booking_view(ctx, booking)


@tool(kind="write")
def change_room_type(
    ctx: ToolContext, booking_id: str, room_type_id: str, charge_change_fee: bool
) -> BookingView:
    """Move a confirmed booking to another room type at the same hotel for the same dates.

    The price difference at the current rates is charged to, or refunded onto, the booking's payment method.
    Check the policy first: some bookings must not be changed, and some changes need manager approval instead.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
        room_type_id: the new room type at the same hotel, e.g. "RT-03-DLX".
        charge_change_fee: true to charge the change fee the policy sets, false when the policy waives it.
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    require_booking_authority(ctx, booking)
    require_status(booking, "confirmed")
    new_room = require_same_hotel(ctx, booking, room_type_id)
    if room_type_id == booking.room_type_id:
        raise ToolError(f"Booking {booking_id} is already in {new_room.name} ({room_type_id})")
    if booking.adults > new_room.max_occupancy:
        raise ToolError(
            f"{new_room.name} sleeps at most {new_room.max_occupancy}; the booking is for {booking.adults}"
        )
    total, nights = price_stay(
        ctx,
        room_type_id,
        booking.check_in,
        booking.check_out,
        rate_plan=booking.rate_plan,
        discount_pct=discount_of(ctx, booking),
    )
    move_booking(ctx, booking, nights, total, charge_change_fee=charge_change_fee)
    booking.room_type_id = room_type_id
    return booking_view(ctx, booking)


@tool(kind="write")
def cancel_booking(
    ctx: ToolContext, booking_id: str, refund_percent: RefundPercent, reason: str
) -> BookingView:
    """Cancel a confirmed booking and refund the given share of its room total to its payment method.

    Work out the refund percentage from the policy (hotel tier, days before check-in, rate plan, the guest's
    loyalty tier) before calling, and cancel only once the guest has agreed to that outcome.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
        refund_percent: share of the room total to refund: 0, 50 or 100.
        reason: the guest's reason, in a few words, e.g. "Trip postponed".
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    require_booking_authority(ctx, booking)
    require_status(booking, "confirmed")
    release_nights(ctx, booking)
    refund = booking.room_total_cents * refund_percent // 100
    if refund > 0:
        record_payment(ctx, booking, "refund", "cancellation_refund", refund)
    booking.status = "cancelled"
    booking.cancelled_at = ctx.now
    booking.cancellation_reason = reason
    return booking_view(ctx, booking)


@tool(kind="write")
def add_booking_extra(
    ctx: ToolContext, booking_id: str, extra: ExtraKind, complimentary: bool
) -> BookingView:
    """Add breakfast, parking or a late check-out to a confirmed or checked-in booking; billed at check-out.

    Prices: breakfast $25 per adult per night, parking $20 per night, late check-out $40 once. Pass
    complimentary=true only when the policy makes the extra free for the guest's loyalty tier.

    Args:
        booking_id: the booking's ID, e.g. "BK-10417".
        extra: "breakfast", "parking" or "late_checkout".
        complimentary: true to waive the price under the loyalty rules, false to bill it.
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    require_booking_authority(ctx, booking)
    require_status(booking, "confirmed", "checked_in")
    existing = ctx.session.scalars(
        select(BookingExtra).where(BookingExtra.booking_id == booking_id, BookingExtra.extra == extra)
    ).first()
    if existing is not None:
        raise ToolError(f"Booking {booking_id} already has {extra}")
    nights = (booking.check_out - booking.check_in).days
    price = 0 if complimentary else extra_price_cents(extra, adults=booking.adults, nights=nights)
    ctx.session.add(
        BookingExtra(booking_id=booking_id, extra=extra, price_cents=price, complimentary=complimentary)
    )
    ctx.session.flush()
    return booking_view(ctx, booking)
