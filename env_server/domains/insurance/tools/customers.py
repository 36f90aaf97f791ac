"""Customer tools: finding and verifying the caller, contact details, and support tickets."""

from __future__ import annotations

import re
from datetime import date

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.insurance.models import (
    Customer,
    IdentityVerification,
    SupportTicket,
    TicketCategory,
    TicketPriority,
    UsState,
)
from env_server.domains.insurance.tools._common import _get_customer, _get_policy, require_verified
from env_server.domains.insurance.tools._views import (
    CustomerView,
    TicketView,
    VerificationView,
    customer_view,
)

_ZIP = re.compile(r"^\d{5}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


@tool(kind="read")
def find_customer(ctx: ToolContext, email: str | None = None, phone: str | None = None) -> list[CustomerView]:
    """Find customers by email address or phone number (give at least one).

    Use this to locate the caller's customer record before anything else. It does not verify the caller.

    Args:
        email: the email address on file, e.g. "maria.lopez@example.com" (case does not matter).
        phone: the phone number on file, e.g. "312-555-0187" (punctuation does not matter).
    """
    if not email and not phone:
        raise ToolError("Give an email address or a phone number to search by")
    query = select(Customer).order_by(Customer.customer_id)
    if email:
        query = query.where(Customer.email == email.strip().lower())
    matches = list(ctx.session.scalars(query))
    if phone:
        matches = [c for c in matches if _digits(c.phone) == _digits(phone)]
    return [customer_view(ctx, c) for c in matches]


@tool(kind="read")
def get_customer(ctx: ToolContext, customer_id: str) -> CustomerView:
    """Show a customer's profile (name, contact details, mailing address without ZIP) and policy ids.

    Args:
        customer_id: the customer id, e.g. "CU-10042".
    """
    return customer_view(ctx, _get_customer(ctx, customer_id))


@tool(kind="write")
def verify_customer_identity(
    ctx: ToolContext, customer_id: str, date_of_birth: date, zip_code: str
) -> VerificationView:
    """Verify that the caller is the customer, using the date of birth and ZIP code the caller gives.

    Required once per conversation before any change to the customer's account, policies or claims. Use
    only details the caller states; the records never show them. A mismatch is refused without saying
    which detail was wrong.

    Args:
        customer_id: the customer the caller claims to be, e.g. "CU-10042".
        date_of_birth: the date of birth the caller gives, e.g. "1984-03-12".
        zip_code: the five-digit ZIP code of the mailing address the caller gives, e.g. "60614".
    """
    customer = _get_customer(ctx, customer_id)
    if customer.date_of_birth != date_of_birth or customer.zip_code != zip_code.strip():
        raise ToolError(
            f"Identity could not be verified: the details do not match our records for {customer_id}"
        )
    verification = IdentityVerification(
        verification_id=ctx.new_id("IDV"), customer_id=customer_id, method="dob_zip", verified_at=ctx.now
    )
    ctx.session.add(verification)
    return VerificationView(verification_id=verification.verification_id, customer_id=customer_id)


@tool(kind="write")
def update_contact_details(
    ctx: ToolContext, customer_id: str, email: str | None = None, phone: str | None = None
) -> CustomerView:
    """Change a verified customer's email address and/or phone number.

    Args:
        customer_id: the customer, e.g. "CU-10042".
        email: the new email address, or omit to keep the current one.
        phone: the new phone number such as "312-555-0187", or omit to keep the current one.
    """
    customer = _get_customer(ctx, customer_id)
    require_verified(ctx, customer_id)
    if email is None and phone is None:
        raise ToolError("Give a new email address, a new phone number, or both")
    if email is not None:
        email = email.strip().lower()
        if not _EMAIL.match(email):
            raise ToolError(f"'{email}' is not a valid email address")
        taken = ctx.session.scalars(select(Customer.customer_id).where(Customer.email == email)).first()
        if taken is not None and taken != customer_id:
            raise ToolError(f"Email {email} belongs to another customer record")
        customer.email = email
    if phone is not None:
        digits = _digits(phone)
        if len(digits) != 10:
            raise ToolError(f"'{phone}' is not a ten-digit phone number")
        customer.phone = f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"
    return customer_view(ctx, customer)


@tool(kind="write")
def update_mailing_address(
    ctx: ToolContext, customer_id: str, street: str, city: str, state: UsState, zip_code: str
) -> CustomerView:
    """Replace a verified customer's mailing address.

    A move to another state cannot be handled here while a policy is in force (see the policy).

    Args:
        customer_id: the customer, e.g. "CU-10042".
        street: house number and street, e.g. "1420 Maple Ave".
        city: the city, e.g. "Chicago".
        state: the two-letter state code, e.g. "IL".
        zip_code: the five-digit ZIP code, e.g. "60614".
    """
    customer = _get_customer(ctx, customer_id)
    require_verified(ctx, customer_id)
    if not _ZIP.match(zip_code.strip()):
        raise ToolError(f"'{zip_code}' is not a five-digit ZIP code")
    customer.street, customer.city = street.strip(), city.strip()
    customer.state, customer.zip_code = state, zip_code.strip()
    return customer_view(ctx, customer)


@tool(kind="write")
def create_support_ticket(
    ctx: ToolContext,
    customer_id: str,
    category: TicketCategory,
    priority: TicketPriority,
    subject: str,
    description: str,
    policy_id: str | None = None,
) -> TicketView:
    """Open a ticket for a back-office team (underwriting, billing, complaints...).

    Use it only where the policy says a request goes to a team; it does not need identity verification.

    Args:
        customer_id: the customer the ticket is about, e.g. "CU-10042".
        category: the team: "billing", "claims", "policy_change", "underwriting", "complaint",
            "cancellation" or "general".
        priority: "low", "normal", "high" or "urgent", as the policy prescribes.
        subject: a one-line summary.
        description: what the customer asked for and why it needs the team.
        policy_id: the policy concerned, e.g. "POL-20042", if any.
    """
    _get_customer(ctx, customer_id)
    if policy_id is not None and _get_policy(ctx, policy_id).customer_id != customer_id:
        raise ToolError(f"Policy {policy_id} does not belong to customer {customer_id}")
    ticket = SupportTicket(
        ticket_id=ctx.new_id("TCK"),
        customer_id=customer_id,
        policy_id=policy_id,
        category=category,
        priority=priority,
        status="open",
        subject=subject.strip(),
        description=description.strip(),
        created_at=ctx.now,
    )
    return TicketView.of(ctx.insert(ticket))


@tool(kind="read")
def list_support_tickets(ctx: ToolContext, customer_id: str) -> list[TicketView]:
    """List a customer's support tickets, oldest first.

    Args:
        customer_id: the customer, e.g. "CU-10042".
    """
    _get_customer(ctx, customer_id)
    tickets = ctx.session.scalars(
        select(SupportTicket)
        .where(SupportTicket.customer_id == customer_id)
        .order_by(SupportTicket.ticket_id)
    )
    return [TicketView.of(t) for t in tickets]
