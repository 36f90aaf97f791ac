"""Guest tools: finding a guest, verifying who you are talking to, and keeping contact details current."""

from __future__ import annotations

from datetime import date

from sqlalchemy import func, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.hotel.models import Booking, Guest, IdentityVerification
from env_server.domains.hotel.tools._common import require_verified
from env_server.domains.hotel.tools._views import (
    BookingSummary,
    GuestView,
    VerificationView,
    booking_summary,
    guest_view,
)


@tool(kind="read")
def find_guest(ctx: ToolContext, email: str) -> GuestView:
    """Look up a guest profile by email address.

    Use it when the guest does not know their guest ID. Finding a profile does not verify the caller.

    Args:
        email: the guest's email address, e.g. "maya.okafor@example.com" (case does not matter).
    """
    guest = ctx.session.scalars(select(Guest).where(func.lower(Guest.email) == email.strip().lower())).first()
    if guest is None:
        raise ToolError(f"No guest profile uses the email {email}")
    return guest_view(ctx, guest)


@tool(kind="read")
def get_guest(ctx: ToolContext, guest_id: str) -> GuestView:
    """Show a guest profile: contact details, loyalty tier and points, corporate link, payment methods.

    Args:
        guest_id: the guest's ID, e.g. "G-1042".
    """
    return guest_view(ctx, Guest.get_or_refuse(ctx.session, guest_id))


@tool(kind="read")
def list_guest_bookings(ctx: ToolContext, guest_id: str) -> list[BookingSummary]:
    """List every booking where the guest is the one staying, oldest arrival first.

    Args:
        guest_id: the guest's ID, e.g. "G-1042".
    """
    Guest.get_or_refuse(ctx.session, guest_id)
    bookings = ctx.session.scalars(
        select(Booking).where(Booking.guest_id == guest_id).order_by(Booking.check_in, Booking.booking_id)
    )
    return [booking_summary(ctx, b) for b in bookings]


@tool(kind="write")
def verify_guest_identity(
    ctx: ToolContext, guest_id: str, last_name: str, date_of_birth: date
) -> VerificationView:
    """Verify that the person you are talking to is this guest, before changing their account or bookings.

    Ask the person for their last name and date of birth and pass exactly what they say; never fill these in
    from a profile, and verify only the person you are talking to, not someone they speak for. The check
    lasts for the rest of the conversation.

    Args:
        guest_id: the profile the person claims to be, e.g. "G-1042".
        last_name: the last name the person gave, e.g. "Okafor".
        date_of_birth: the date of birth the person gave, e.g. "1984-03-17".
    """
    guest = Guest.get_or_refuse(ctx.session, guest_id)
    if guest.last_name.casefold() != last_name.strip().casefold() or guest.date_of_birth != date_of_birth:
        raise ToolError(f"The details do not match guest {guest_id}; the person is not verified")
    ctx.session.add(
        IdentityVerification(verification_id=ctx.new_id("IV"), guest_id=guest_id, verified_at=ctx.now)
    )
    return VerificationView(guest_id=guest_id, name=f"{guest.first_name} {guest.last_name}", verified=True)


@tool(kind="write")
def update_guest_contact(
    ctx: ToolContext, guest_id: str, email: str | None = None, phone: str | None = None
) -> GuestView:
    """Change a verified guest's email address and/or phone number.

    Args:
        guest_id: the guest's ID, e.g. "G-1042".
        email: the new email address, e.g. "maya.okafor@newmail.example"; omit to keep the current one.
        phone: the new phone number in international format, e.g. "+4915550123"; omit to keep it.
    """
    guest = Guest.get_or_refuse(ctx.session, guest_id)
    require_verified(ctx, guest_id)
    if email is None and phone is None:
        raise ToolError("Give a new email, a new phone number, or both")
    if email is not None:
        email = email.strip().lower()
        if "@" not in email:
            raise ToolError(f"{email} is not an email address")
        taken = ctx.session.scalars(
            select(Guest.guest_id).where(func.lower(Guest.email) == email, Guest.guest_id != guest_id)
        ).first()
        if taken is not None:
            raise ToolError(f"The email {email} belongs to another profile; it cannot be reused")
        guest.email = email
    if phone is not None:
        digits = phone.replace(" ", "").replace("-", "")
        if not digits.startswith("+") or not digits[1:].isdigit() or not 8 <= len(digits) <= 16:
            raise ToolError(f"{phone} is not an international phone number like +4915550123")
        guest.phone = digits
    return guest_view(ctx, guest)
