"""Shipping tools: tracking a parcel and replacing a parcel the carrier lost."""

from __future__ import annotations

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import Shipment
from env_server.domains.retail.tools._common import (
    _get_order,
    items_of,
    require_verified,
    shipments_of,
    stock_of,
)
from env_server.domains.retail.tools._views import ShipmentView


@tool(kind="read")
def track_shipment(ctx: ToolContext, tracking_number: str) -> ShipmentView:
    """Find a parcel by its carrier tracking number and show its status and the order it belongs to.

    Args:
        tracking_number: the carrier's tracking number, e.g. "1Z8F3K2M9Q4R7T1V5X".
    """
    shipment = ctx.session.scalars(
        select(Shipment).where(Shipment.tracking_number == tracking_number.strip().upper())
    ).one_or_none()
    if shipment is None:
        raise ToolError(f"No shipment has tracking number {tracking_number}")
    return ShipmentView.of(shipment)


@tool(kind="write")
def reship_order(ctx: ToolContext, order_id: str) -> ShipmentView:
    """Send a replacement parcel for an order whose latest shipment the carrier reported lost.

    Reserves the order's units (less any returned ones) in the order's warehouse and creates a new shipment
    with the same carrier. Refused when any unit is out of stock there.

    Args:
        order_id: the order whose parcel was lost, e.g. "OR-10317".
    """
    order = _get_order(ctx, order_id)
    require_verified(ctx, order.customer_id)
    shipments = shipments_of(ctx, order.id)
    if not shipments or shipments[-1].status != "lost":
        status = shipments[-1].status if shipments else "not shipped"
        raise ToolError(
            f"Order {order.id}'s latest shipment is {status}; only a lost shipment can be replaced"
        )
    for item in items_of(ctx, order.id):
        units = item.quantity - item.returned_quantity
        stock = stock_of(ctx, item.product_id, order.warehouse)
        if units > stock.on_hand - stock.reserved:
            raise ToolError(
                f"Product {item.product_id} is out of stock in the {order.warehouse} warehouse "
                f"({stock.on_hand - stock.reserved} available, {units} needed); the order cannot be reshipped"
            )
        stock.reserved += units
    replacement = Shipment(
        id=ctx.new_id("SH"),
        order_id=order.id,
        carrier=shipments[-1].carrier,
        # Derived from the order, not the generated ID, so it compares equal across trajectories.
        tracking_number=f"VL{order.id.removeprefix('OR-')}R{len(shipments) + 1}",
        status="label_created",
        shipped_on=None,
        delivered_on=None,
    )
    return ShipmentView.of(ctx.insert(replacement))
