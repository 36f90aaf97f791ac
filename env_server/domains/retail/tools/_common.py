"""Shared lookups and guards for the retail tools: each raises the agent-facing `ToolError` in one place.

Tools call `_get_order(ctx, "OR-10001")` and friends instead of querying and checking for `None`
themselves, and `require_verified(ctx, customer_id)` before any write on a customer's account, so the tool
bodies read like the policy.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy import func, select

from env_server.domain import ToolContext, ToolError, is_verified
from env_server.domains.retail.models import (
    Customer,
    IdentityVerification,
    InventoryLevel,
    Order,
    OrderItem,
    Payment,
    PaymentMethod,
    Product,
    Promotion,
    Refund,
    Shipment,
)

#: A positive amount of money in US cents (4550 is $45.50).
Cents = Annotated[int, Field(gt=0)]

#: Order statuses in which the order has not left the warehouse yet.
UNSHIPPED = ("pending", "processing")


def _get_customer(ctx: ToolContext, customer_id: str) -> Customer:
    """The customer `customer_id`, or a `ToolError` naming it."""
    return ctx.get_or_refuse(
        Customer, customer_id, f"Customer {customer_id} not found; customer IDs look like 'CU-10001'"
    )


def require_verified(ctx: ToolContext, customer_id: str) -> None:
    """Refuse to act on an account not verified with `verify_customer_identity` in this conversation."""
    if not is_verified(ctx, IdentityVerification.customer_id, customer_id):
        raise ToolError(
            f"Customer {customer_id} is not verified; call verify_customer_identity with the email address "
            "and billing zip code the customer gives you first"
        )


def _get_order(ctx: ToolContext, order_id: str) -> Order:
    """The order `order_id`, or a `ToolError` naming it."""
    return ctx.get_or_refuse(Order, order_id, f"Order {order_id} not found; order IDs look like 'OR-10001'")


def _get_item(ctx: ToolContext, order_item_id: str, order: Order | None = None) -> OrderItem:
    """The order line `order_item_id` (of `order`, when given), or a `ToolError`."""
    item = ctx.get_or_refuse(
        OrderItem, order_item_id, f"Order item {order_item_id} not found; order item IDs look like 'OI-10001'"
    )
    if order is not None and item.order_id != order.id:
        lines = ", ".join(i.id for i in items_of(ctx, order.id))
        raise ToolError(f"Order item {order_item_id} is not part of order {order.id} (its items: {lines})")
    return item


def _get_product(ctx: ToolContext, product_id: str) -> Product:
    """The product `product_id`, or a `ToolError` naming it."""
    return ctx.get_or_refuse(
        Product, product_id, f"Product {product_id} not found; product IDs look like 'PR-10001'"
    )


def _get_promotion(ctx: ToolContext, code: str) -> Promotion:
    """The promotion with promo code `code` (case-insensitive), or a `ToolError`."""
    return ctx.get_or_refuse(Promotion, code.strip().upper(), f"Promo code {code!r} does not exist")


def _get_payment_method(ctx: ToolContext, payment_method_id: str, customer_id: str) -> PaymentMethod:
    """The customer's stored payment method `payment_method_id`, or a `ToolError` listing theirs."""
    method = ctx.session.get(PaymentMethod, payment_method_id)
    if method is None or method.customer_id != customer_id:
        own = ", ".join(
            m.id
            for m in ctx.session.scalars(
                select(PaymentMethod)
                .where(PaymentMethod.customer_id == customer_id)
                .order_by(PaymentMethod.id)
            )
        )
        raise ToolError(
            f"Payment method {payment_method_id} does not belong to customer {customer_id} (theirs: {own})"
        )
    return method


def payment_of(ctx: ToolContext, order: Order) -> Payment:
    """The payment that captured `order` (every order has exactly one)."""
    return ctx.session.scalars(select(Payment).where(Payment.order_id == order.id)).one()


def refunded_cents(ctx: ToolContext, order_id: str) -> int:
    """Money already refunded on an order."""
    total = ctx.session.scalar(select(func.sum(Refund.amount_cents)).where(Refund.order_id == order_id))
    return total or 0


def add_refund(
    ctx: ToolContext,
    order: Order,
    amount_cents: int,
    reason: str,
    payment_method_id: str,
    order_item_id: str | None = None,
) -> Refund:
    """Record a refund on `order` (checked by the database at once)."""
    refund = Refund(
        id=ctx.new_id("RF"),
        order_id=order.id,
        order_item_id=order_item_id,
        payment_method_id=payment_method_id,
        amount_cents=amount_cents,
        reason=reason,
        created_at=ctx.now,
    )
    return ctx.insert(refund)


def items_of(ctx: ToolContext, order_id: str) -> list[OrderItem]:
    """The lines of an order, in ID order."""
    return list(
        ctx.session.scalars(select(OrderItem).where(OrderItem.order_id == order_id).order_by(OrderItem.id))
    )


def shipments_of(ctx: ToolContext, order_id: str) -> list[Shipment]:
    """The shipments of an order, oldest first."""
    return list(
        ctx.session.scalars(select(Shipment).where(Shipment.order_id == order_id).order_by(Shipment.id))
    )


def stock_of(ctx: ToolContext, product_id: str, warehouse: str) -> InventoryLevel:
    """The inventory row of a product in a warehouse (every product is stocked in both)."""
    return ctx.session.scalars(
        select(InventoryLevel).where(
            InventoryLevel.product_id == product_id, InventoryLevel.warehouse == warehouse
        )
    ).one()
