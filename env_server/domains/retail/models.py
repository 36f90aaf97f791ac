"""Tables of the retail domain: Voltline, an online electronics shop.

Customers hold a membership tier; they place orders of products shipped from one of two warehouses, paid
with one payment method. After the sale come shipments, refunds, returns (RMAs), warranty claims, store
credits, support tickets and supervisor approval requests. Identity verifications record who proved their
identity in the current conversation (excluded from the state comparison).

Money is an integer number of US cents everywhere; dates are `Date`, instants `DateTime`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import allowed_values, one_of

TierCode = Literal["basic", "silver", "gold", "platinum"]
CustomerStatus = Literal["active", "closed"]
ProductCategory = Literal[
    "laptop", "phone", "tablet", "headphones", "tv", "camera", "wearable", "gaming", "accessory"
]
Warehouse = Literal["EAST", "WEST"]
PaymentKind = Literal["credit_card", "paypal", "gift_card"]
OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
CancelReason = Literal[
    "no_longer_needed", "ordered_by_mistake", "found_better_price", "delivery_too_slow", "other"
]
ShipmentStatus = Literal["label_created", "in_transit", "delivered", "lost"]
Carrier = Literal["UPS", "FedEx", "USPS"]
RefundReason = Literal[
    "cancellation", "return", "price_adjustment", "lost_package", "promotion", "billing_error"
]
ReturnReason = Literal["changed_mind", "defective", "damaged", "wrong_item", "not_as_described"]
ReturnStatus = Literal["authorized", "received", "refunded", "rejected"]
WarrantyIssue = Literal["defect", "battery", "accidental_damage"]
WarrantyResolution = Literal["repair", "replacement"]
WarrantyStatus = Literal["open", "completed", "denied"]
CreditReason = Literal["delay_compensation", "goodwill"]
TicketCategory = Literal[
    "missing_package", "damaged_delivery", "billing", "product_question", "account", "feedback"
]
TicketStatus = Literal["open", "closed"]
ApprovalKind = Literal["refund", "return"]
ApprovalStatus = Literal["pending", "approved", "rejected"]


class Base(DeclarativeBase):
    """Declarative base of the retail tables, on the domain's own `MetaData`."""

    metadata = MetaData()


class MembershipTier(Base):
    """A membership tier and the benefits the policy grants it."""

    __tablename__ = "membership_tiers"
    __table_args__ = (
        one_of("code", TierCode, name="ck_tier_code"),
        CheckConstraint("return_window_days > 0", name="ck_tier_window"),
        CheckConstraint("warranty_extension_months >= 0", name="ck_tier_warranty_ext"),
    )

    code: Mapped[str] = mapped_column(String(16), primary_key=True)  # basic | silver | gold | platinum
    name: Mapped[str] = mapped_column(String(40), nullable=False)  # display name, "Gold"
    rank: Mapped[int] = mapped_column(Integer, nullable=False, unique=True)  # 1 (basic) .. 4 (platinum)
    # Days after delivery during which an item may be returned.
    return_window_days: Mapped[int] = mapped_column(Integer, nullable=False)
    # True when the changed-mind return fee is waived for this tier.
    return_fee_waived: Mapped[bool] = mapped_column(Boolean, nullable=False)
    # Months added to every product's manufacturer warranty.
    warranty_extension_months: Mapped[int] = mapped_column(Integer, nullable=False)
    # True when the tier has price protection (refund of a later price drop).
    price_protection: Mapped[bool] = mapped_column(Boolean, nullable=False)


class Customer(Base):
    """A shop account; the billing address's zip code is one of the two identity factors."""

    __tablename__ = "customers"
    __table_args__ = (
        one_of("status", CustomerStatus, name="ck_customer_status"),
        CheckConstraint("store_credit_cents >= 0", name="ck_customer_credit"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "CU-10001"
    first_name: Mapped[str] = mapped_column(String(60), nullable=False)
    last_name: Mapped[str] = mapped_column(String(60), nullable=False)
    email: Mapped[str] = mapped_column(String(120), nullable=False, unique=True)  # identity factor 1
    phone: Mapped[str] = mapped_column(String(20), nullable=False)
    address_line: Mapped[str] = mapped_column(String(120), nullable=False)  # billing address
    city: Mapped[str] = mapped_column(String(60), nullable=False)
    state: Mapped[str] = mapped_column(String(2), nullable=False)
    zip_code: Mapped[str] = mapped_column(String(10), nullable=False)  # identity factor 2
    tier: Mapped[str] = mapped_column(ForeignKey("membership_tiers.code"), nullable=False)
    # Spendable store credit balance (delay compensation and goodwill credits add to it).
    store_credit_cents: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    member_since: Mapped[date] = mapped_column(Date, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="active")


class PaymentMethod(Base):
    """A stored way to pay; refunds go back to the method an order was paid with."""

    __tablename__ = "payment_methods"
    __table_args__ = (one_of("kind", PaymentKind, name="ck_payment_method_kind"),)

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "PM-10001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False, index=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)  # credit_card | paypal | gift_card
    label: Mapped[str] = mapped_column(String(60), nullable=False)  # "Visa ending 4242"


class Product(Base):
    """A catalogue item; `price_cents` is today's price (order lines keep the price paid)."""

    __tablename__ = "products"
    __table_args__ = (
        one_of("category", ProductCategory, name="ck_product_category"),
        CheckConstraint("price_cents > 0", name="ck_product_price"),
        CheckConstraint("warranty_months >= 0", name="ck_product_warranty"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "PR-10001"
    name: Mapped[str] = mapped_column(String(120), nullable=False)
    brand: Mapped[str] = mapped_column(String(40), nullable=False)
    category: Mapped[str] = mapped_column(String(16), nullable=False)
    price_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # current price
    # Manufacturer warranty in months, counted from the delivery date.
    warranty_months: Mapped[int] = mapped_column(Integer, nullable=False)
    # Clearance items sold as final sale cannot be returned.
    final_sale: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)


class InventoryLevel(Base):
    """Stock of one product in one warehouse; available = on_hand - reserved."""

    __tablename__ = "inventory"
    __table_args__ = (
        UniqueConstraint("product_id", "warehouse", name="uq_inventory_product_warehouse"),
        one_of("warehouse", Warehouse, name="ck_inventory_warehouse"),
        CheckConstraint("on_hand >= 0 AND reserved >= 0 AND reserved <= on_hand", name="ck_inventory_levels"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True)  # "INV-10001-EAST"
    product_id: Mapped[str] = mapped_column(ForeignKey("products.id"), nullable=False)
    warehouse: Mapped[str] = mapped_column(String(8), nullable=False)  # EAST | WEST
    on_hand: Mapped[int] = mapped_column(Integer, nullable=False)  # units on the shelf
    reserved: Mapped[int] = mapped_column(Integer, nullable=False)  # units held for unshipped orders


class Promotion(Base):
    """A promo code: a percentage or a fixed amount off the order subtotal."""

    __tablename__ = "promotions"
    __table_args__ = (
        CheckConstraint(
            "(percent_off IS NULL) <> (amount_off_cents IS NULL)", name="ck_promotion_one_discount"
        ),
        CheckConstraint(
            "percent_off IS NULL OR (percent_off > 0 AND percent_off < 100)", name="ck_promo_pct"
        ),
        CheckConstraint("amount_off_cents IS NULL OR amount_off_cents > 0", name="ck_promo_amount"),
        CheckConstraint("valid_from <= valid_until", name="ck_promotion_dates"),
    )

    code: Mapped[str] = mapped_column(String(24), primary_key=True)  # "FALL10"
    description: Mapped[str] = mapped_column(String(160), nullable=False)
    percent_off: Mapped[int | None] = mapped_column(Integer)  # whole percent of the subtotal
    amount_off_cents: Mapped[int | None] = mapped_column(Integer)  # fixed discount
    min_subtotal_cents: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # Lowest membership tier allowed to use the code (None: every tier).
    min_tier: Mapped[str | None] = mapped_column(ForeignKey("membership_tiers.code"))
    valid_from: Mapped[date] = mapped_column(Date, nullable=False)  # first day the code works
    valid_until: Mapped[date] = mapped_column(Date, nullable=False)  # last day the code works


class Order(Base):
    """A customer order, shipped from one warehouse; total = subtotal - discount + shipping."""

    __tablename__ = "orders"
    __table_args__ = (
        one_of("status", OrderStatus, name="ck_order_status"),
        one_of("warehouse", Warehouse, name="ck_order_warehouse"),
        CheckConstraint(
            "subtotal_cents >= 0 AND discount_cents >= 0 AND shipping_cents >= 0 "
            "AND discount_cents <= subtotal_cents",
            name="ck_order_amounts",
        ),
        CheckConstraint(
            "total_cents = subtotal_cents - discount_cents + shipping_cents", name="ck_order_total"
        ),
        CheckConstraint(
            f"cancel_reason IS NULL OR {allowed_values('cancel_reason', CancelReason)}",
            name="ck_order_cancel_reason",
        ),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "OR-10001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False, index=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    placed_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    warehouse: Mapped[str] = mapped_column(String(8), nullable=False)  # ships from
    subtotal_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # sum of line prices
    discount_cents: Mapped[int] = mapped_column(Integer, nullable=False, default=0)  # promotion discount
    shipping_cents: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    total_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # what the customer paid
    promo_code: Mapped[str | None] = mapped_column(ForeignKey("promotions.code"))
    # Delivery date promised at checkout; delay compensation is measured against it.
    promised_date: Mapped[date] = mapped_column(Date, nullable=False)
    ship_address_line: Mapped[str] = mapped_column(String(120), nullable=False)
    ship_city: Mapped[str] = mapped_column(String(60), nullable=False)
    ship_state: Mapped[str] = mapped_column(String(2), nullable=False)
    ship_zip_code: Mapped[str] = mapped_column(String(10), nullable=False)
    cancel_reason: Mapped[str | None] = mapped_column(String(24))  # set when cancelled


class OrderItem(Base):
    """One line of an order: a product, a quantity and the unit price paid."""

    __tablename__ = "order_items"
    __table_args__ = (
        CheckConstraint("quantity > 0", name="ck_item_quantity"),
        CheckConstraint("unit_price_cents > 0", name="ck_item_price"),
        CheckConstraint("returned_quantity >= 0 AND returned_quantity <= quantity", name="ck_item_returned"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "OI-10001"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False, index=True)
    product_id: Mapped[str] = mapped_column(ForeignKey("products.id"), nullable=False)
    quantity: Mapped[int] = mapped_column(Integer, nullable=False)
    unit_price_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # price paid per unit
    # Units covered by an authorized or completed return.
    returned_quantity: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # A Voltline protection plan: +24 months of warranty, accidental damage covered.
    protection_plan: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)


class Payment(Base):
    """The capture of an order's total on one payment method (the refund destination)."""

    __tablename__ = "payments"
    __table_args__ = (CheckConstraint("amount_cents > 0", name="ck_payment_amount"),)

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "PA-10001"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False, unique=True)
    payment_method_id: Mapped[str] = mapped_column(ForeignKey("payment_methods.id"), nullable=False)
    amount_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # captured amount
    captured_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class Shipment(Base):
    """A parcel of an order; a lost parcel may be replaced by a new shipment."""

    __tablename__ = "shipments"
    __table_args__ = (
        one_of("status", ShipmentStatus, name="ck_shipment_status"),
        one_of("carrier", Carrier, name="ck_shipment_carrier"),
        CheckConstraint("(status = 'delivered') = (delivered_on IS NOT NULL)", name="ck_shipment_delivered"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "SH-10001"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False, index=True)
    carrier: Mapped[str] = mapped_column(String(8), nullable=False)
    tracking_number: Mapped[str] = mapped_column(String(32), nullable=False, unique=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    shipped_on: Mapped[date | None] = mapped_column(Date)  # None while only a label exists
    delivered_on: Mapped[date | None] = mapped_column(Date)  # set iff delivered


class Refund(Base):
    """Money sent back to a payment method for an order."""

    __tablename__ = "refunds"
    __table_args__ = (
        one_of("reason", RefundReason, name="ck_refund_reason"),
        CheckConstraint("amount_cents > 0", name="ck_refund_amount"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "RF-10001"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False, index=True)
    # Order line a price adjustment is for (None for whole-order refunds).
    order_item_id: Mapped[str | None] = mapped_column(ForeignKey("order_items.id"))
    payment_method_id: Mapped[str] = mapped_column(ForeignKey("payment_methods.id"), nullable=False)
    amount_cents: Mapped[int] = mapped_column(Integer, nullable=False)
    reason: Mapped[str] = mapped_column(String(24), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class Return(Base):
    """A return merchandise authorization (RMA) for units of one order line."""

    __tablename__ = "returns"
    __table_args__ = (
        one_of("reason", ReturnReason, name="ck_return_reason"),
        one_of("status", ReturnStatus, name="ck_return_status"),
        CheckConstraint("quantity > 0", name="ck_return_quantity"),
        CheckConstraint("fee_cents >= 0 AND refund_cents >= 0", name="ck_return_amounts"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "RMA-10001"
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False, index=True)
    order_item_id: Mapped[str] = mapped_column(ForeignKey("order_items.id"), nullable=False)
    quantity: Mapped[int] = mapped_column(Integer, nullable=False)
    reason: Mapped[str] = mapped_column(String(24), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    fee_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # return fee deducted from the refund
    refund_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # refunded once the parcel arrives
    # Where the refund will go once the returned units are received.
    refund_payment_method_id: Mapped[str] = mapped_column(ForeignKey("payment_methods.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class WarrantyClaim(Base):
    """A repair or replacement under warranty (or protection plan) for one order line."""

    __tablename__ = "warranty_claims"
    __table_args__ = (
        one_of("issue_type", WarrantyIssue, name="ck_claim_issue"),
        one_of("resolution", WarrantyResolution, name="ck_claim_resolution"),
        one_of("status", WarrantyStatus, name="ck_claim_status"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "WC-10001"
    order_item_id: Mapped[str] = mapped_column(ForeignKey("order_items.id"), nullable=False, index=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False)
    issue_type: Mapped[str] = mapped_column(String(24), nullable=False)
    resolution: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    description: Mapped[str] = mapped_column(String(400), nullable=False)  # the customer's words
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class StoreCredit(Base):
    """A store credit grant; the customer's balance holds the running sum."""

    __tablename__ = "store_credits"
    __table_args__ = (
        one_of("reason", CreditReason, name="ck_credit_reason"),
        CheckConstraint("amount_cents > 0", name="ck_credit_amount"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "SC-10001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False, index=True)
    order_id: Mapped[str | None] = mapped_column(ForeignKey("orders.id"))  # the order it compensates
    amount_cents: Mapped[int] = mapped_column(Integer, nullable=False)
    reason: Mapped[str] = mapped_column(String(24), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class SupportTicket(Base):
    """A case handed to a back-office team (carrier investigations, billing, product questions)."""

    __tablename__ = "support_tickets"
    __table_args__ = (
        one_of("category", TicketCategory, name="ck_ticket_category"),
        one_of("status", TicketStatus, name="ck_ticket_status"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "TK-10001"
    customer_id: Mapped[str | None] = mapped_column(
        ForeignKey("customers.id"), index=True
    )  # None: no account
    order_id: Mapped[str | None] = mapped_column(ForeignKey("orders.id"))
    product_id: Mapped[str | None] = mapped_column(ForeignKey("products.id"))
    category: Mapped[str] = mapped_column(String(24), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    summary: Mapped[str] = mapped_column(String(400), nullable=False)  # free text
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class ApprovalRequest(Base):
    """A refund or return put on hold until a supervisor approves it."""

    __tablename__ = "approval_requests"
    __table_args__ = (
        one_of("kind", ApprovalKind, name="ck_approval_kind"),
        one_of("status", ApprovalStatus, name="ck_approval_status"),
        CheckConstraint("amount_cents > 0", name="ck_approval_amount"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "AR-10001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False, index=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), nullable=False)
    order_item_id: Mapped[str | None] = mapped_column(ForeignKey("order_items.id"))  # for returns
    kind: Mapped[str] = mapped_column(String(16), nullable=False)  # refund | return
    amount_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # the money awaiting approval
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    summary: Mapped[str] = mapped_column(String(400), nullable=False)  # free text for the supervisor
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class IdentityVerification(Base):
    """A successful identity check in the current conversation; write tools require one."""

    __tablename__ = "identity_verifications"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "IV-90001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"), nullable=False, index=True)
    verified_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
