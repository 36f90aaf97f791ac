"""What the retail tools return: pydantic views of the rows, with money in cents and IDs spelled out.

Each `*_view(ctx, row)` builder turns an ORM row (plus what belongs with it) into the JSON the agent sees.
"""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel
from sqlalchemy import select

from env_server.domain import ToolContext
from env_server.domains.retail.models import (
    ApprovalRequest,
    Customer,
    MembershipTier,
    Order,
    OrderItem,
    PaymentMethod,
    Product,
    Promotion,
    Refund,
    Return,
    Shipment,
    StoreCredit,
    SupportTicket,
    WarrantyClaim,
)
from env_server.domains.retail.tools._common import payment_of, shipments_of, stock_of


class TierView(BaseModel):
    """A membership tier and the benefits the policy grants it."""

    code: str
    name: str
    return_window_days: int
    return_fee_waived: bool
    warranty_extension_months: int
    price_protection: bool


class PaymentMethodView(BaseModel):
    """A stored payment method."""

    payment_method_id: str
    kind: str
    label: str


class CustomerView(BaseModel):
    """A customer account with its tier benefits, payment methods and order IDs."""

    customer_id: str
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


class StockView(BaseModel):
    """Units of a product available to sell in one warehouse (on hand minus reserved)."""

    warehouse: str
    available: int


class ProductView(BaseModel):
    """A catalogue product with today's price and stock."""

    product_id: str
    name: str
    brand: str
    category: str
    price_cents: int
    warranty_months: int
    final_sale: bool
    stock: list[StockView]


class PromotionView(BaseModel):
    """A promo code and its conditions."""

    code: str
    description: str
    percent_off: int | None
    amount_off_cents: int | None
    min_subtotal_cents: int
    min_tier: str | None
    valid_from: date
    valid_until: date


class OrderItemView(BaseModel):
    """One order line; `returned_quantity` counts units already under a return."""

    order_item_id: str
    product_id: str
    product_name: str
    quantity: int
    unit_price_cents: int
    returned_quantity: int
    protection_plan: bool
    final_sale: bool


class ShipmentView(BaseModel):
    """A parcel and its tracking state."""

    shipment_id: str
    order_id: str
    carrier: str
    tracking_number: str
    status: str
    shipped_on: date | None
    delivered_on: date | None


class PaymentView(BaseModel):
    """The payment of an order: the original payment method refunds go back to."""

    payment_id: str
    payment_method_id: str
    payment_method_label: str
    amount_cents: int


class RefundView(BaseModel):
    """Money sent back to a payment method."""

    refund_id: str
    order_id: str
    order_item_id: str | None
    payment_method_id: str
    amount_cents: int
    reason: str


class ReturnView(BaseModel):
    """A return authorization (RMA); the refund is paid when the parcel arrives."""

    rma_id: str
    order_id: str
    order_item_id: str
    quantity: int
    reason: str
    status: str
    fee_cents: int
    refund_cents: int
    refund_payment_method_id: str


class StoreCreditView(BaseModel):
    """A store credit grant and the customer's balance after it."""

    credit_id: str
    customer_id: str
    order_id: str | None
    amount_cents: int
    reason: str
    balance_cents: int


class OrderView(BaseModel):
    """An order with everything that happened to it."""

    order_id: str
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


class OrderSummary(BaseModel):
    """One line of a customer's order list."""

    order_id: str
    status: str
    placed_at: datetime
    total_cents: int
    products: list[str]


class WarrantyClaimView(BaseModel):
    """A warranty claim on an order line."""

    claim_id: str
    order_item_id: str
    issue_type: str
    resolution: str
    status: str


class TicketView(BaseModel):
    """A support ticket."""

    ticket_id: str
    customer_id: str | None
    order_id: str | None
    product_id: str | None
    category: str
    status: str
    summary: str


class ApprovalView(BaseModel):
    """A refund or return waiting for a supervisor."""

    approval_id: str
    order_id: str
    order_item_id: str | None
    kind: str
    amount_cents: int
    status: str


def customer_view(ctx: ToolContext, customer: Customer) -> CustomerView:
    """The account, its tier benefits, payment methods and orders (newest first)."""
    tier = ctx.session.get_one(MembershipTier, customer.tier)
    methods = ctx.session.scalars(
        select(PaymentMethod).where(PaymentMethod.customer_id == customer.id).order_by(PaymentMethod.id)
    )
    orders = ctx.session.scalars(
        select(Order.id).where(Order.customer_id == customer.id).order_by(Order.placed_at.desc())
    )
    return CustomerView(
        customer_id=customer.id,
        first_name=customer.first_name,
        last_name=customer.last_name,
        email=customer.email,
        phone=customer.phone,
        address_line=customer.address_line,
        city=customer.city,
        state=customer.state,
        zip_code=customer.zip_code,
        tier=TierView.model_validate(tier, from_attributes=True),
        store_credit_cents=customer.store_credit_cents,
        member_since=customer.member_since,
        status=customer.status,
        payment_methods=[method_view(m) for m in methods],
        order_ids=list(orders),
    )


def method_view(method: PaymentMethod) -> PaymentMethodView:
    """A stored payment method."""
    return PaymentMethodView(payment_method_id=method.id, kind=method.kind, label=method.label)


def product_view(ctx: ToolContext, product: Product) -> ProductView:
    """A product with its available stock per warehouse."""
    stock = [stock_of(ctx, product.id, w) for w in ("EAST", "WEST")]
    return ProductView(
        product_id=product.id,
        name=product.name,
        brand=product.brand,
        category=product.category,
        price_cents=product.price_cents,
        warranty_months=product.warranty_months,
        final_sale=product.final_sale,
        stock=[StockView(warehouse=s.warehouse, available=s.on_hand - s.reserved) for s in stock],
    )


def promotion_view(promotion: Promotion) -> PromotionView:
    """A promo code and its conditions."""
    return PromotionView.model_validate(promotion, from_attributes=True)


def shipment_view(shipment: Shipment) -> ShipmentView:
    """A parcel and its tracking state."""
    return ShipmentView(
        shipment_id=shipment.id,
        order_id=shipment.order_id,
        carrier=shipment.carrier,
        tracking_number=shipment.tracking_number,
        status=shipment.status,
        shipped_on=shipment.shipped_on,
        delivered_on=shipment.delivered_on,
    )


def refund_view(refund: Refund) -> RefundView:
    """Money sent back to a payment method."""
    return RefundView(
        refund_id=refund.id,
        order_id=refund.order_id,
        order_item_id=refund.order_item_id,
        payment_method_id=refund.payment_method_id,
        amount_cents=refund.amount_cents,
        reason=refund.reason,
    )


def return_view(ret: Return) -> ReturnView:
    """A return authorization."""
    return ReturnView(
        rma_id=ret.id,
        order_id=ret.order_id,
        order_item_id=ret.order_item_id,
        quantity=ret.quantity,
        reason=ret.reason,
        status=ret.status,
        fee_cents=ret.fee_cents,
        refund_cents=ret.refund_cents,
        refund_payment_method_id=ret.refund_payment_method_id,
    )


def credit_view(credit: StoreCredit, balance_cents: int) -> StoreCreditView:
    """A store credit grant with the customer's current balance."""
    return StoreCreditView(
        credit_id=credit.id,
        customer_id=credit.customer_id,
        order_id=credit.order_id,
        amount_cents=credit.amount_cents,
        reason=credit.reason,
        balance_cents=balance_cents,
    )


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
    return OrderView(
        order_id=order.id,
        customer_id=order.customer_id,
        status=order.status,
        placed_at=order.placed_at,
        warehouse=order.warehouse,
        subtotal_cents=order.subtotal_cents,
        discount_cents=order.discount_cents,
        shipping_cents=order.shipping_cents,
        total_cents=order.total_cents,
        promo_code=order.promo_code,
        promised_date=order.promised_date,
        ship_to=f"{order.ship_address_line}, {order.ship_city}, {order.ship_state} {order.ship_zip_code}",
        cancel_reason=order.cancel_reason,
        items=[
            OrderItemView(
                order_item_id=item.id,
                product_id=item.product_id,
                product_name=product.name,
                quantity=item.quantity,
                unit_price_cents=item.unit_price_cents,
                returned_quantity=item.returned_quantity,
                protection_plan=item.protection_plan,
                final_sale=product.final_sale,
            )
            for item, product in items
        ],
        payment=PaymentView(
            payment_id=payment.id,
            payment_method_id=method.id,
            payment_method_label=method.label,
            amount_cents=payment.amount_cents,
        ),
        shipments=[shipment_view(s) for s in shipments_of(ctx, order.id)],
        refunds=[refund_view(r) for r in refunds],
        returns=[return_view(r) for r in returns],
        store_credits=[credit_view(c, customer.store_credit_cents) for c in credits],
    )


def claim_view(claim: WarrantyClaim) -> WarrantyClaimView:
    """A warranty claim."""
    return WarrantyClaimView(
        claim_id=claim.id,
        order_item_id=claim.order_item_id,
        issue_type=claim.issue_type,
        resolution=claim.resolution,
        status=claim.status,
    )


def ticket_view(ticket: SupportTicket) -> TicketView:
    """A support ticket."""
    return TicketView(
        ticket_id=ticket.id,
        customer_id=ticket.customer_id,
        order_id=ticket.order_id,
        product_id=ticket.product_id,
        category=ticket.category,
        status=ticket.status,
        summary=ticket.summary,
    )


def approval_view(request: ApprovalRequest) -> ApprovalView:
    """A pending or decided approval request."""
    return ApprovalView(
        approval_id=request.id,
        order_id=request.order_id,
        order_item_id=request.order_item_id,
        kind=request.kind,
        amount_cents=request.amount_cents,
        status=request.status,
    )
