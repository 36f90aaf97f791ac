"""Support tools: tickets for back-office teams and supervisor approval requests."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import (
    ApprovalKind,
    ApprovalRequest,
    SupportTicket,
    TicketCategory,
)
from env_server.domains.retail.tools._common import (
    Cents,
    _get_customer,
    _get_item,
    _get_order,
    _get_product,
    require_verified,
)
from env_server.domains.retail.tools._views import ApprovalView, TicketView


@tool(kind="write")
def create_support_ticket(
    ctx: ToolContext,
    category: TicketCategory,
    summary: str,
    customer_id: str | None = None,
    order_id: str | None = None,
    product_id: str | None = None,
) -> TicketView:
    """Open a ticket for a back-office team, e.g. a carrier investigation of a parcel that never arrived.

    A ticket about an account or order needs a verified customer; a general product question or feedback
    without an account leaves customer_id and order_id empty.

    Args:
        category: missing_package, damaged_delivery, billing, product_question, account or feedback.
        summary: what happened, in a sentence or two.
        customer_id: the customer, e.g. "CU-10042"; defaults to the order's customer.
        order_id: the order concerned, e.g. "OR-10317".
        product_id: the product concerned, e.g. "PR-10013".
    """
    if order_id is not None:
        order = _get_order(ctx, order_id)
        if customer_id is not None and customer_id != order.customer_id:
            raise ToolError(f"Order {order.id} does not belong to customer {customer_id}")
        customer_id = order.customer_id
    if customer_id is not None:
        require_verified(ctx, _get_customer(ctx, customer_id).id)
    if product_id is not None:
        _get_product(ctx, product_id)
    ticket = SupportTicket(
        id=ctx.new_id("TK"),
        customer_id=customer_id,
        order_id=order_id,
        product_id=product_id,
        category=category,
        status="open",
        summary=summary.strip(),
        created_at=ctx.now,
    )
    return TicketView.of(ctx.insert(ticket))


@tool(kind="write")
def create_approval_request(
    ctx: ToolContext,
    order_id: str,
    kind: ApprovalKind,
    amount_cents: Cents,
    summary: str,
    order_item_id: str | None = None,
) -> ApprovalView:
    """Put a refund or return on hold for a supervisor, instead of issuing it, when the policy requires it.

    Args:
        order_id: the order, e.g. "OR-10317".
        kind: refund (a direct refund) or return (a return's refund).
        amount_cents: the money awaiting approval in cents, e.g. 129900 for $1,299.00.
        summary: what the customer asked for and why it needs approval.
        order_item_id: for returns, the order line to be returned, e.g. "OI-10520".
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    if order_item_id is not None:
        _get_item(ctx, order_item_id, order)
    pending = ctx.session.scalars(
        select(ApprovalRequest.id).where(
            ApprovalRequest.order_id == order.id,
            ApprovalRequest.kind == kind,
            ApprovalRequest.status == "pending",
        )
    ).first()
    if pending is not None:
        raise ToolError(f"Approval request {pending} for a {kind} on order {order.id} is already pending")
    request = ApprovalRequest(
        id=ctx.new_id("AR"),
        customer_id=order.customer_id,
        order_id=order.id,
        order_item_id=order_item_id,
        kind=kind,
        amount_cents=amount_cents,
        status="pending",
        summary=summary.strip(),
        created_at=ctx.now,
    )
    return ApprovalView.of(ctx.insert(request))


@tool(kind="read")
def list_support_tickets(ctx: ToolContext, customer_id: str) -> list[TicketView]:
    """List a customer's support tickets, newest first.

    Args:
        customer_id: the customer, e.g. "CU-10042".
    """
    _get_customer(ctx, customer_id)
    tickets = ctx.session.scalars(
        select(SupportTicket)
        .where(SupportTicket.customer_id == customer_id)
        .order_by(SupportTicket.id.desc())
    )
    return [TicketView.of(t) for t in tickets]
