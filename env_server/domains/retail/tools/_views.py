"""What the retail tools return: pydantic views of the rows, with money in cents and IDs spelled out.

A view reads its fields from an ORM row (`TicketView.of(ticket)`); the `*_view(ctx, row)` builders add what
belongs with a row (an order's lines, payment, shipments...).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from pydantic import Field
from sqlalchemy import select

from env_server.domain import RowView, ToolContext
from env_server.domains.retail.models import (
    Customer,
    MembershipTier,
    Order,
    OrderItem,
    PaymentMethod,
    Product,
    Refund,
    Return,
    StoreCredit,
)
from env_server.domains.retail.tools._common import payment_of, shipments_of, stock_of

#: The row's `id`, which the agent sees under the view's descriptive field name (`ticket_id`, `rma_id`...);
#: it is always read from the row (a field given to `RowView.of` does not replace it).
RowId = Annotated[str, Field(validation_alias="id")]


class TierView(RowView):
    """A membership tier and the benefits the policy grants it."""

    code: str
    name: str
    return_window_days: int
    return_fee_waived: bool
    warranty_extension_months: int
    price_protection: bool


class PaymentMethodView(RowView):
    """A stored payment method."""

    payment_method_id: RowId
    kind: str
    label: str


class CustomerView(RowView):
    """A customer account with its tier benefits, payment methods and order IDs."""

    customer_id: RowId
    first_name: str
    last_name: str
    email: str
    phone: str
    address_line: str
    city: str
    state: str
    zip_code: str
    tier: TierView
    store_credit_cents: int
    member_since: date
    status: str
    payment_methods: list[PaymentMethodView]
    order_ids: list[str]


class StockView(RowView):
    """Units of a product available to sell in one warehouse (on hand minus reserved)."""

    warehouse: str
    available: int


class ProductView(RowView):
    """A catalogue product with today's price and stock."""

    product_id: RowId
    name: str
    brand: str
    category: str
    price_cents: int
    warranty_months: int
    final_sale: bool
    stock: list[StockView]


class PromotionView(RowView):
    """A promo code and its conditions."""

    code: str
    description: str
    percent_off: int | None
    amount_off_cents: int | None
    min_subtotal_cents: int
    min_tier: str | None
    valid_from: date
    valid_until: date


class OrderItemView(RowView):
    """One order line; `returned_quantity` counts units already under a return."""

    order_item_id: RowId
    product_id: str
    product_name: str
    quantity: int
    unit_price_cents: int
    returned_quantity: int
    protection_plan: bool
    final_sale: bool


class ShipmentView(RowView):
    """A parcel and its tracking state."""

    shipment_id: RowId
    order_id: str
    carrier: str
    tracking_number: str
    status: str
    shipped_on: date | None
    delivered_on: date | None


class PaymentView(RowView):
    """The payment of an order: the original payment method refunds go back to."""

    payment_id: RowId
    payment_method_id: str
    payment_method_label: str
    amount_cents: int


class RefundView(RowView):
    """Money sent back to a payment method."""

    refund_id: RowId
    order_id: str
    order_item_id: str | None
    payment_method_id: str
    amount_cents: int
    reason: str


class ReturnView(RowView):
    """A return authorization (RMA); the refund is paid when the parcel arrives."""

    rma_id: RowId
    order_id: str
    order_item_id: str
    quantity: int
    reason: str
    status: str
    fee_cents: int
    refund_cents: int
    refund_payment_method_id: str


class StoreCreditView(RowView):
    """A store credit grant and the customer's balance after it."""

    credit_id: RowId
    customer_id: str
    order_id: str | None
    amount_cents: int
    reason: str
    balance_cents: int


class OrderView(RowView):
    """An order with everything that happened to it."""

    order_id: RowId
    customer_id: str
    status: str
    placed_at: datetime
    warehouse: str
    subtotal_cents: int
    discount_cents: int
    shipping_cents: int
    total_cents: int
    promo_code: str | None
    promised_date: date
    ship_to: str
    cancel_reason: str | None
    items: list[OrderItemView]
    payment: PaymentView
    shipments: list[ShipmentView]
    refunds: list[RefundView]
    returns: list[ReturnView]
    store_credits: list[StoreCreditView]


class OrderSummary(RowView):
    """One line of a customer's order list."""

    order_id: str
    status: str
    placed_at: datetime
    total_cents: int
    products: list[str]


class WarrantyClaimView(RowView):
    """A warranty claim on an order line."""

    claim_id: RowId
    order_item_id: str
    issue_type: str
    resolution: str
    status: str


class TicketView(RowView):
    """A support ticket."""

    ticket_id: RowId
    customer_id: str | None
    order_id: str | None
    product_id: str | None
    category: str
    status: str
    summary: str


class ApprovalView(RowView):
    """A refund or return waiting for a supervisor."""

    approval_id: RowId
    order_id: str
    order_item_id: str | None
    kind: str
    amount_cents: int
    status: str


def customer_view(ctx: ToolContext, customer: Customer) -> CustomerView:
    """The account, its tier benefits, payment methods and orders (newest first)."""
    methods = ctx.session.scalars(
        select(PaymentMethod).where(PaymentMethod.customer_id == customer.id).order_by(PaymentMethod.id)
    )
    orders = ctx.session.scalars(
        select(Order.id).where(Order.customer_id == customer.id).order_by(Order.placed_at.desc())
    )
    return CustomerView.of(
        customer,
        tier=ctx.session.get_one(MembershipTier, customer.tier),
        payment_methods=list(methods),
        order_ids=list(orders),
    )


def product_view(ctx: ToolContext, product: Product) -> ProductView:
    """A product with its available stock per warehouse."""
    stock = [stock_of(ctx, product.id, w) for w in ("EAST", "WEST")]
    return ProductView.of(product, stock=[StockView.of(s, available=s.on_hand - s.reserved) for s in stock])


def credit_view(credit: StoreCredit, balance_cents: int) -> StoreCreditView:
    """A store credit grant with the customer's current balance."""
    return StoreCreditView.of(credit, balance_cents=balance_cents)


def order_view(ctx: ToolContext, order: Order) -> OrderView:
    """The order with its lines, payment, shipments, refunds, returns and compensation."""
    payment = payment_of(ctx, order)
    method = ctx.session.get_one(PaymentMethod, payment.payment_method_id)
    customer = ctx.session.get_one(Customer, order.customer_id)
    items = ctx.session.execute(
        select(OrderItem, Product)
        .join(Product, Product.id == OrderItem.product_id)
        .where(OrderItem.order_id == order.id)
        .order_by(OrderItem.id)
    ).all()
    refunds = ctx.session.scalars(select(Refund).where(Refund.order_id == order.id).order_by(Refund.id))
    returns = ctx.session.scalars(select(Return).where(Return.order_id == order.id).order_by(Return.id))
    credits = ctx.session.scalars(
        select(StoreCredit).where(StoreCredit.order_id == order.id).order_by(StoreCredit.id)
    )
    return OrderView.of(
        order,
        ship_to=f"{order.ship_address_line}, {order.ship_city}, {order.ship_state} {order.ship_zip_code}",
        items=[
            OrderItemView.of(item, product_name=product.name, final_sale=product.final_sale)
            for item, product in items
        ],
        payment=PaymentView.of(payment, payment_method_label=method.label),
        shipments=shipments_of(ctx, order.id),
        refunds=list(refunds),
        returns=list(returns),
        store_credits=[credit_view(c, customer.store_credit_cents) for c in credits],
    )
