"""Money-back tools: refunds to a payment method and store credit grants."""

from __future__ import annotations

from typing import Literal

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import CreditReason, StoreCredit
from env_server.domains.retail.tools._common import (
    Cents,
    _get_customer,
    _get_item,
    _get_order,
    _get_payment_method,
    add_refund,
    payment_of,
    refunded_cents,
    require_verified,
)
from env_server.domains.retail.tools._views import RefundView, StoreCreditView, credit_view


@tool(kind="write")
def issue_refund(
    ctx: ToolContext,
    order_id: str,
    amount_cents: Cents,
    payment_method_id: str,
    reason: Literal["price_adjustment", "lost_package", "billing_error"],
    order_item_id: str | None = None,
) -> RefundView:
    """Refund money on an order to one of the customer's payment methods.

    For price adjustments, lost parcels and billing errors only: cancellations and promo codes refund
    automatically, and returns are refunded when the parcel arrives. The refund cannot exceed what was paid
    minus what was already refunded.

    Args:
        order_id: the order, e.g. "OR-10317".
        amount_cents: the amount in cents, e.g. 2000 for $20.00.
        payment_method_id: where the money goes, e.g. "PM-10088".
        reason: price_adjustment, lost_package or billing_error.
        order_item_id: the order line of a price adjustment, e.g. "OI-10520"; omit for whole-order refunds.
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    _get_payment_method(ctx, payment_method_id, order.customer_id)
    if order_item_id is not None:
        _get_item(ctx, order_item_id, order)
    refundable = payment_of(ctx, order).amount_cents - refunded_cents(ctx, order.id)
    if amount_cents > refundable:
        raise ToolError(f"Order {order.id} has {refundable} cents left to refund; {amount_cents} is too much")
    return RefundView.of(add_refund(ctx, order, amount_cents, reason, payment_method_id, order_item_id))


@tool(kind="write")
def issue_store_credit(
    ctx: ToolContext, customer_id: str, amount_cents: Cents, reason: CreditReason, order_id: str | None = None
) -> StoreCreditView:
    """Add store credit to a customer's balance, e.g. the delay compensation the policy grants.

    Args:
        customer_id: the customer, e.g. "CU-10042".
        amount_cents: the credit in cents, e.g. 3250 for $32.50.
        reason: delay_compensation or goodwill.
        order_id: the order the credit compensates, e.g. "OR-10317" (required for delay compensation).
    """
    customer = _get_customer(ctx, customer_id)
    require_verified(ctx, customer.id)
    if order_id is not None and _get_order(ctx, order_id).customer_id != customer.id:
        raise ToolError(f"Order {order_id} does not belong to customer {customer.id}")
    if reason == "delay_compensation" and order_id is None:
        raise ToolError("Delay compensation must name the delayed order (order_id)")
    credit = StoreCredit(
        id=ctx.new_id("SC"),
        customer_id=customer.id,
        order_id=order_id,
        amount_cents=amount_cents,
        reason=reason,
        created_at=ctx.now,
    )
    ctx.session.add(credit)
    customer.store_credit_cents += amount_cents
    ctx.session.flush()
    return credit_view(credit, customer.store_credit_cents)
