"""Corporate tools: account details and manager-approval requests for large corporate changes."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.hotel.models import ApprovalRequest, Booking, ChangeType, CorporateAccount
from env_server.domains.hotel.tools._common import (
    require_booking_authority,
    require_same_hotel,
    require_status,
)
from env_server.domains.hotel.tools._views import ApprovalView, CorporateAccountView, account_view


@tool(kind="read")
def get_corporate_account(ctx: ToolContext, account_id: str) -> CorporateAccountView:
    """Show a corporate account: negotiated discount, invoice payment method, travelers and coordinators.

    Args:
        account_id: the account's ID, e.g. "CA-02".
    """
    return account_view(ctx, CorporateAccount.get_or_refuse(ctx.session, account_id))


@tool(kind="write")
def create_approval_request(
    ctx: ToolContext,
    booking_id: str,
    requested_by_guest_id: str,
    change_type: ChangeType,
    new_check_in: date | None = None,
    new_check_out: date | None = None,
    new_room_type_id: str | None = None,
    note: str = "",
) -> ApprovalView:
    """File a change to a corporate booking for a manager's approval, instead of making the change.

    Use it when the policy puts a change on hold for approval. The booking and its payments stay exactly as
    they are until a manager decides; tell the requester the change is pending. Describe exactly the change
    asked for: new dates for "change_dates", the new room type for "change_room_type", nothing for "cancel".

    Args:
        booking_id: the booking's ID, e.g. "BK-20417".
        requested_by_guest_id: the verified person asking: the guest or a coordinator of the account.
        change_type: "change_dates", "change_room_type" or "cancel".
        new_check_in: the requested arrival date (change_dates only), e.g. "2026-10-14".
        new_check_out: the requested departure date (change_dates only), e.g. "2026-10-16".
        new_room_type_id: the requested room type at the same hotel (change_room_type only), e.g. "RT-04-DLX".
        note: context for the manager in a sentence, e.g. "Guest's meeting moved by two days".
    """
    booking = Booking.get_or_refuse(ctx.session, booking_id)
    require_booking_authority(ctx, booking, acting_guest_id=requested_by_guest_id)
    require_status(booking, "confirmed")
    pending = ctx.session.scalars(
        select(ApprovalRequest.approval_id).where(
            ApprovalRequest.booking_id == booking_id, ApprovalRequest.status == "pending"
        )
    ).first()
    if pending is not None:
        raise ToolError(f"Booking {booking_id} already has a pending approval request ({pending})")
    dates = (new_check_in, new_check_out)
    if change_type == "change_dates":
        if new_check_in is None or new_check_out is None or new_room_type_id is not None:
            raise ToolError("A change_dates request needs new_check_in and new_check_out, and no room type")
        if new_check_out <= new_check_in:
            raise ToolError(f"new_check_out {new_check_out} must be after new_check_in {new_check_in}")
        if dates == (booking.check_in, booking.check_out):
            raise ToolError(f"Booking {booking_id} already runs from {new_check_in} to {new_check_out}")
    elif change_type == "change_room_type":
        if new_room_type_id is None or dates != (None, None):
            raise ToolError("A change_room_type request needs new_room_type_id, and no dates")
        require_same_hotel(ctx, booking, new_room_type_id)
        if new_room_type_id == booking.room_type_id:
            raise ToolError(f"Booking {booking_id} is already in room type {new_room_type_id}")
    elif dates != (None, None) or new_room_type_id is not None:
        raise ToolError("A cancel request takes no new dates or room type")
    request = ApprovalRequest(
        approval_id=ctx.new_id("APR"),
        booking_id=booking_id,
        requested_by_guest_id=requested_by_guest_id,
        change_type=change_type,
        new_check_in=new_check_in,
        new_check_out=new_check_out,
        new_room_type_id=new_room_type_id,
        status="pending",
        note=note,
        created_at=ctx.now,
    )
    ctx.session.add(request)
    return ApprovalView.of(request)
