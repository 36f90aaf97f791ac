"""Return tools: authorizing the return of delivered units (an RMA)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.catalog import RETURN_FEE_CENTS
from env_server.domains.retail.models import Return, ReturnReason
from env_server.domains.retail.tools._common import (
    _get_item,
    _get_order,
    _get_payment_method,
    require_verified,
)
from env_server.domains.retail.tools._views import ReturnView


@tool(kind="write")
def create_return(
    ctx: ToolContext,
    order_id: str,
    order_item_id: str,
    quantity: Annotated[int, Field(gt=0)],
    reason: ReturnReason,
    waive_return_fee: bool,
    refund_payment_method_id: str,
) -> ReturnView:
    """Authorize the return of delivered units of one order line and record where the refund will go.

    The refund (unit price x quantity, minus the return fee unless waived) is paid to
    `refund_payment_method_id` when the parcel arrives. Check the return window, final-sale flag, fee rules
    and the approval limit in the policy before calling.

    Args:
        order_id: the delivered order, e.g. "OR-10317".
        order_item_id: the line being returned, e.g. "OI-10520".
        quantity: how many units of that line come back, e.g. 1.
        reason: changed_mind, defective, damaged, wrong_item or not_as_described.
        waive_return_fee: true when the policy waives the $7.99 return fee, false to deduct it.
        refund_payment_method_id: the payment method the refund goes to, e.g. "PM-10088".
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    item = _get_item(ctx, order_item_id, order)
    _get_payment_method(ctx, refund_payment_method_id, order.customer_id)
    if order.status != "delivered":
        raise ToolError(f"Order {order.id} is {order.status}; only delivered orders can be returned")
    returnable = item.quantity - item.returned_quantity
    if quantity > returnable:
        raise ToolError(f"Order item {item.id} has {returnable} unit(s) left to return; {quantity} requested")
    fee = 0 if waive_return_fee else RETURN_FEE_CENTS
    item.returned_quantity += quantity
    ret = Return(
        id=ctx.new_id("RMA"),
        order_id=order.id,
        order_item_id=item.id,
        quantity=quantity,
        reason=reason,
        status="authorized",
        fee_cents=fee,
        refund_cents=max(item.unit_price_cents * quantity - fee, 0),
        refund_payment_method_id=refund_payment_method_id,
        created_at=ctx.now,
    )
    return ReturnView.of(ctx.insert(ret))
