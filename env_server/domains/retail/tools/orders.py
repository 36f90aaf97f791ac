"""Order tools: reading an order, cancelling it, changing where it ships and adding a promo code."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import CancelReason
from env_server.domains.retail.tools._common import (
    UNSHIPPED,
    _get_order,
    _get_promotion,
    add_refund,
    items_of,
    payment_of,
    refunded_cents,
    require_verified,
    stock_of,
)
from env_server.domains.retail.tools._views import OrderView, order_view

StateCode = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]
ZipCode = Annotated[str, Field(pattern=r"^\d{5}$")]


@tool(kind="read")
def get_order(ctx: ToolContext, order_id: str) -> OrderView:
    """Read an order: lines, payment method, shipments and tracking, refunds, returns and compensation.

    Args:
        order_id: the order's ID, e.g. "OR-10317".
    """
    return order_view(ctx, _get_order(ctx, order_id))


@tool(kind="write")
def cancel_order(ctx: ToolContext, order_id: str, reason: CancelReason) -> OrderView:
    """Cancel an order, release its reserved stock and refund what was paid to the original payment method.

    Only after the customer confirmed the cancellation. Delivered orders cannot be cancelled.

    Args:
        order_id: the order to cancel, e.g. "OR-10317".
        reason: the customer's reason: no_longer_needed, ordered_by_mistake, found_better_price,
            delivery_too_slow or other.
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    if order.status in ("cancelled", "delivered"):
        raise ToolError(f"Order {order.id} is {order.status}; it cannot be cancelled")
    if order.status in UNSHIPPED:
        for item in items_of(ctx, order.id):
            stock_of(ctx, item.product_id, order.warehouse).reserved -= item.quantity
    order.status = "cancelled"
    order.cancel_reason = reason
    payment = payment_of(ctx, order)
    remaining = payment.amount_cents - refunded_cents(ctx, order.id)
    if remaining > 0:
        add_refund(ctx, order, remaining, "cancellation", payment.payment_method_id)
    ctx.session.flush()
    return order_view(ctx, order)


@tool(kind="write")
def update_order_address(
    ctx: ToolContext, order_id: str, address_line: str, city: str, state: StateCode, zip_code: ZipCode
) -> OrderView:
    """Change the shipping address of an order that has not shipped yet (pending or processing).

    Args:
        order_id: the order, e.g. "OR-10317".
        address_line: street and number, e.g. "418 Lakeview Dr Apt 3".
        city: the city, e.g. "Chicago".
        state: two-letter state code, e.g. "IL".
        zip_code: five-digit zip code, e.g. "60614".
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    if order.status not in UNSHIPPED:
        raise ToolError(
            f"Order {order.id} is {order.status}; only pending or processing orders can be re-addressed"
        )
    order.ship_address_line = address_line.strip()
    order.ship_city = city.strip()
    order.ship_state = state
    order.ship_zip_code = zip_code
    ctx.session.flush()
    return order_view(ctx, order)


@tool(kind="write")
def apply_promotion(ctx: ToolContext, order_id: str, code: str) -> OrderView:
    """Add a promo code to an order after checkout and refund the discount to the original payment method.

    Check the policy's conditions first (order status and age, the code's dates, minimum subtotal and tier);
    an order can carry one promo code only.

    Args:
        order_id: the order, e.g. "OR-10317".
        code: the promo code, e.g. "FALL10".
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    promotion = _get_promotion(ctx, code)
    if order.status == "cancelled":
        raise ToolError(f"Order {order.id} is cancelled; a promo code cannot be added")
    if order.promo_code is not None:
        raise ToolError(
            f"Order {order.id} already uses promo code {order.promo_code}; only one code per order"
        )
    if promotion.percent_off is not None:
        discount = order.subtotal_cents * promotion.percent_off // 100
    else:
        discount = min(promotion.amount_off_cents or 0, order.subtotal_cents)
    order.promo_code = promotion.code
    order.discount_cents = discount
    order.total_cents = order.subtotal_cents - discount + order.shipping_cents
    if discount > 0:
        add_refund(ctx, order, discount, "promotion", payment_of(ctx, order).payment_method_id)
    ctx.session.flush()
    return order_view(ctx, order)
