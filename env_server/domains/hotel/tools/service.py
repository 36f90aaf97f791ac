"""Service-recovery tools: support tickets for reported problems, and goodwill loyalty points."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.hotel.models import Booking, Guest, LoyaltyTransaction, SupportTicket, TicketCategory
from env_server.domains.hotel.tools._common import (
    require_verified,
)
from env_server.domains.hotel.tools._views import LoyaltyAwardView, TicketView


@tool(kind="read")
def list_support_tickets(ctx: ToolContext, guest_id: str) -> list[TicketView]:
    """List the support tickets a guest has reported, oldest first.

    Args:
        guest_id: the guest's ID, e.g. "G-1042".
    """
    Guest.get_or_refuse(ctx.session, guest_id)
    tickets = ctx.session.scalars(
        select(SupportTicket).where(SupportTicket.guest_id == guest_id).order_by(SupportTicket.ticket_id)
    )
    return [TicketView.of(t) for t in tickets]


@tool(kind="write")
def open_support_ticket(
    ctx: ToolContext, guest_id: str, category: TicketCategory, summary: str, booking_id: str | None = None
) -> TicketView:
    """Record a problem a guest reports, so the hotel can fix and follow it up.

    Anyone may report a problem: this does not need identity verification. Open one ticket per problem.

    Args:
        guest_id: the guest reporting it, e.g. "G-1042".
        category: "noise", "cleanliness", "maintenance", "billing" or "other".
        summary: the problem in a sentence, e.g. "Heating in room 412 does not work".
        booking_id: the stay it is about, e.g. "BK-10417"; omit if it is not about a stay.
    """
    Guest.get_or_refuse(ctx.session, guest_id)
    if booking_id is not None and Booking.get_or_refuse(ctx.session, booking_id).guest_id != guest_id:
        raise ToolError(f"Booking {booking_id} is not a stay of guest {guest_id}")
    ticket = SupportTicket(
        ticket_id=ctx.new_id("TK"),
        guest_id=guest_id,
        booking_id=booking_id,
        category=category,
        status="open",
        summary=summary,
        created_at=ctx.now,
    )
    ctx.session.add(ticket)
    return TicketView.of(ticket)


@tool(kind="write")
def award_goodwill_points(ctx: ToolContext, ticket_id: str, points: int) -> LoyaltyAwardView:
    """Credit goodwill loyalty points to a verified guest for a problem recorded in a support ticket.

    The policy sets the amount and when an award is allowed; the ticket must be about one of the guest's
    stays.

    Args:
        ticket_id: the support ticket the award answers, e.g. "TK-90001".
        points: the number of points to credit, e.g. 1000.
    """
    ticket = SupportTicket.get_or_refuse(ctx.session, ticket_id)
    if ticket.booking_id is None:
        raise ToolError(
            f"Ticket {ticket_id} is not about a stay; goodwill points answer problems with a stay"
        )
    if points <= 0:
        raise ToolError(f"Award a positive number of points, not {points}")
    booking = Booking.get_or_refuse(ctx.session, ticket.booking_id)
    guest = Guest.get_or_refuse(ctx.session, booking.guest_id)
    require_verified(ctx, guest.guest_id)
    guest.loyalty_points += points
    transaction = LoyaltyTransaction(
        transaction_id=ctx.new_id("LT"),
        guest_id=guest.guest_id,
        booking_id=booking.booking_id,
        ticket_id=ticket_id,
        kind="goodwill",
        points=points,
        created_at=ctx.now,
    )
    ctx.session.add(transaction)
    return LoyaltyAwardView.of(transaction, new_balance=guest.loyalty_points)
