"""Retail entities, written once, for the seed (ORM rows), the families (patch rows) and the tool tests.

The catalogue's tiers, products and promotions (their rows are in `catalog.py`), a customer and their
stored payment methods, an order with its lines, its payment and its shipment: each is a spec of its
table's columns, and what follows from other values is derived once here (a method's label
from its kind, an order's shipping and total from its subtotal and discount, a payment from its order). The
drawing builders (`phone`, `method_label`) draw from the caller's RNG in the order the seed and the families
always drew, so the seed's rows and the generated tasks stay the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime

from env_server.domain import EntitySpec
from env_server.domains.retail.models import (
    Customer,
    MembershipTier,
    Order,
    OrderItem,
    Payment,
    PaymentMethod,
    Product,
    Promotion,
    Refund,
    Shipment,
    StoreCredit,
    WarrantyClaim,
)

CARD_BRANDS = ("Visa", "Mastercard", "Amex", "Discover")
#: Orders with a subtotal from this amount ship free; below it shipping costs `SHIPPING_CENTS`.
FREE_SHIPPING_FROM_CENTS = 5000
SHIPPING_CENTS = 599


@dataclass
class TierSpec(EntitySpec[MembershipTier], model=MembershipTier):
    """A membership tier and its benefits (return window, fee waiver, warranty extension, price cover)."""

    code: str
    name: str
    rank: int
    return_window_days: int
    return_fee_waived: bool
    warranty_extension_months: int
    price_protection: bool


@dataclass
class ProductSpec(EntitySpec[Product], model=Product):
    """A catalogue product: today's price in cents, warranty months and the final-sale flag."""

    id: str
    name: str
    brand: str
    category: str
    price_cents: int
    warranty_months: int
    final_sale: bool = False


@dataclass
class PromotionSpec(EntitySpec[Promotion], model=Promotion):
    """A promo code: percent or fixed amount off, minimum subtotal, minimum tier and validity dates."""

    code: str
    description: str
    percent_off: int | None
    amount_off_cents: int | None
    min_subtotal_cents: int
    min_tier: str | None
    valid_from: date
    valid_until: date


@dataclass
class CustomerSpec(EntitySpec[Customer], model=Customer):
    """A customer account; every column is stated."""

    id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    address_line: str
    city: str
    state: str
    zip_code: str
    tier: str
    store_credit_cents: int
    member_since: date
    status: str


@dataclass
class PaymentMethodSpec(EntitySpec[PaymentMethod], model=PaymentMethod):
    """A stored payment method of a customer."""

    id: str
    customer_id: str
    kind: str
    label: str


@dataclass
class OrderSpec(EntitySpec[Order], model=Order):
    """An order (see `order` for its derived shipping and total)."""

    id: str
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
    ship_address_line: str
    ship_city: str
    ship_state: str
    ship_zip_code: str
    cancel_reason: str | None


@dataclass
class OrderItemSpec(EntitySpec[OrderItem], model=OrderItem):
    """One line of an order."""

    id: str
    order_id: str
    product_id: str
    quantity: int
    unit_price_cents: int
    returned_quantity: int
    protection_plan: bool


@dataclass
class PaymentSpec(EntitySpec[Payment], model=Payment):
    """The capture of an order's total."""

    id: str
    order_id: str
    payment_method_id: str
    amount_cents: int
    captured_at: datetime


@dataclass
class ShipmentSpec(EntitySpec[Shipment], model=Shipment):
    """An order's parcel; `delivered_on` is stated (None until delivered)."""

    id: str
    order_id: str
    carrier: str
    tracking_number: str
    status: str
    shipped_on: date | None
    delivered_on: date | None


@dataclass
class RefundSpec(EntitySpec[Refund], model=Refund):
    """Money returned on an order to a payment method; `order_item_id` is stated (None: the whole order)."""

    id: str
    order_id: str
    order_item_id: str | None
    payment_method_id: str
    amount_cents: int
    reason: str
    created_at: datetime


@dataclass
class StoreCreditSpec(EntitySpec[StoreCredit], model=StoreCredit):
    """Credit added to a customer's balance (see `delay_credit`)."""

    id: str
    customer_id: str
    order_id: str | None
    amount_cents: int
    reason: str
    created_at: datetime


@dataclass
class WarrantyClaimSpec(EntitySpec[WarrantyClaim], model=WarrantyClaim):
    """A warranty claim on an order line."""

    id: str
    order_item_id: str
    customer_id: str
    issue_type: str
    resolution: str
    status: str
    description: str
    created_at: datetime


def delay_credit(
    credit_id: str, customer_id: str, order_id: str, cents: int, at: datetime
) -> StoreCreditSpec:
    """The store credit that compensates a late delivery (policy 9: reason delay_compensation)."""
    return StoreCreditSpec(credit_id, customer_id, order_id, cents, "delay_compensation", at)


def phone(rng: random.Random) -> str:
    """A drawn US phone number, "555-123-4567"."""
    return f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"


def method_label(rng: random.Random, kind: str) -> str:
    """How a stored payment method of `kind` is shown: "Visa ending 4242", "PayPal account"..."""
    digits = f"{rng.randint(0, 9999):04d}"
    return {
        "credit_card": f"{rng.choice(CARD_BRANDS)} ending {digits}",
        "paypal": "PayPal account",
        "gift_card": f"Gift card ending {digits}",
    }[kind]


def shipping_cents(subtotal_cents: int) -> int:
    """Shipping is free from the free-shipping threshold on, a flat fee below it."""
    return 0 if subtotal_cents >= FREE_SHIPPING_FROM_CENTS else SHIPPING_CENTS


def order(
    order_id: str,
    customer_id: str,
    *,
    status: str,
    placed_at: datetime,
    warehouse: str,
    subtotal_cents: int,
    discount_cents: int,
    promo_code: str | None,
    promised_date: date,
    ship_to: tuple[str, str, str, str],
    cancel_reason: str | None = None,
) -> OrderSpec:
    """An order whose shipping and total follow from its subtotal and discount.

    `ship_to` is the delivery address: (line, city, state, zip code).
    """
    shipping = shipping_cents(subtotal_cents)
    line, city, state, zip_code = ship_to
    return OrderSpec(
        order_id,
        customer_id,
        status,
        placed_at,
        warehouse,
        subtotal_cents,
        discount_cents,
        shipping,
        subtotal_cents - discount_cents + shipping,
        promo_code,
        promised_date,
        line,
        city,
        state,
        zip_code,
        cancel_reason,
    )


def payment(payment_id: str, placed: OrderSpec, payment_method_id: str) -> PaymentSpec:
    """The capture of `placed`'s total with the given method, when it was placed."""
    return PaymentSpec(payment_id, placed.id, payment_method_id, placed.total_cents, placed.placed_at)
