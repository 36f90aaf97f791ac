"""Warranty tools: the coverage of a delivered item and filing a repair or replacement claim."""

from __future__ import annotations

import calendar
from datetime import date

from pydantic import BaseModel
from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.retail.models import (
    Customer,
    MembershipTier,
    Order,
    OrderItem,
    Product,
    WarrantyClaim,
    WarrantyIssue,
    WarrantyResolution,
)
from env_server.domains.retail.tools._common import _get_item, require_verified, shipments_of
from env_server.domains.retail.tools._views import WarrantyClaimView

#: Months a Voltline protection plan adds to the warranty (and accidental damage cover).
PROTECTION_PLAN_MONTHS = 24


class WarrantyStatusView(BaseModel):
    """How long a delivered item is covered, and its claim history."""

    order_item_id: str
    product_id: str
    product_name: str
    delivered_on: date
    manufacturer_months: int
    tier_extension_months: int
    protection_plan_months: int
    coverage_ends_on: date
    covered_today: bool
    accidental_damage_covered: bool
    claims: list[WarrantyClaimView]


def add_months(start: date, months: int) -> date:
    """The same day `months` later, clamped to the month's last day (31 Jan + 1 month = 28/29 Feb)."""
    month_index = start.month - 1 + months
    year, month = start.year + month_index // 12, month_index % 12 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


def _delivered_on(ctx: ToolContext, item: OrderItem) -> date:
    delivered = [s.delivered_on for s in shipments_of(ctx, item.order_id) if s.delivered_on is not None]
    if not delivered:
        raise ToolError(f"Order item {item.id} has not been delivered; its warranty starts at delivery")
    return delivered[-1]


def _claims(ctx: ToolContext, item: OrderItem) -> list[WarrantyClaim]:
    return list(
        ctx.session.scalars(
            select(WarrantyClaim).where(WarrantyClaim.order_item_id == item.id).order_by(WarrantyClaim.id)
        )
    )


@tool(kind="read")
def check_warranty(ctx: ToolContext, order_item_id: str) -> WarrantyStatusView:
    """Show an item's warranty coverage: its end date, whether accidental damage is covered, earlier claims.

    The end date is the manufacturer warranty plus the tier extension and any protection plan, counted from
    the delivery date.

    Args:
        order_item_id: the order line, e.g. "OI-10520".
    """
    item = _get_item(ctx, order_item_id)
    product = ctx.session.get_one(Product, item.product_id)
    customer_id = ctx.session.get_one(Order, item.order_id).customer_id
    tier = ctx.session.get_one(MembershipTier, ctx.session.get_one(Customer, customer_id).tier)
    delivered_on = _delivered_on(ctx, item)
    plan_months = PROTECTION_PLAN_MONTHS if item.protection_plan else 0
    ends = add_months(delivered_on, product.warranty_months + tier.warranty_extension_months + plan_months)
    covered = ctx.now.date() <= ends
    return WarrantyStatusView(
        order_item_id=item.id,
        product_id=product.id,
        product_name=product.name,
        delivered_on=delivered_on,
        manufacturer_months=product.warranty_months,
        tier_extension_months=tier.warranty_extension_months,
        protection_plan_months=plan_months,
        coverage_ends_on=ends,
        covered_today=covered,
        accidental_damage_covered=covered and item.protection_plan,
        claims=[WarrantyClaimView.of(c) for c in _claims(ctx, item)],
    )


@tool(kind="write")
def file_warranty_claim(
    ctx: ToolContext,
    order_item_id: str,
    issue_type: WarrantyIssue,
    resolution: WarrantyResolution,
    description: str,
) -> WarrantyClaimView:
    """File a warranty claim for a delivered item, to be repaired or replaced.

    Check coverage with check_warranty and the policy's resolution rule first. One open claim per item.

    Args:
        order_item_id: the order line, e.g. "OI-10520".
        issue_type: defect, battery or accidental_damage.
        resolution: repair or replacement, as the policy decides.
        description: the fault in the customer's words, e.g. "screen flickers after ten minutes".
    """
    item = _get_item(ctx, order_item_id)
    customer_id = ctx.session.get_one(Order, item.order_id).customer_id
    require_verified(ctx, customer_id)
    _delivered_on(ctx, item)
    open_claims = [c.id for c in _claims(ctx, item) if c.status == "open"]
    if open_claims:
        raise ToolError(
            f"Claim {open_claims[0]} is still open for order item {item.id}; wait for its outcome"
        )
    claim = WarrantyClaim(
        id=ctx.new_id("WC"),
        order_item_id=item.id,
        customer_id=customer_id,
        issue_type=issue_type,
        resolution=resolution,
        status="open",
        description=description.strip(),
        created_at=ctx.now,
    )
    return WarrantyClaimView.of(ctx.insert(claim))
