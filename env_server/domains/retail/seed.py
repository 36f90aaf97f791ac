"""The deterministic seed of the retail domain: reference data plus six months of shop history.

`seed(session, rng)` draws everything random from `rng` alone, so a given seed value yields the same rows
on every run and backend. Seeded IDs stay below 70000: tasks add their own customers and orders from
70000 (test split) and 80000 (train split), and tools generate IDs from 90001.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from sqlalchemy.orm import Session

from env_server.domains.retail.catalog import (
    NOW,
    PRODUCTS,
    PROMOTIONS,
    RETURN_FEE_CENTS,
    TIERS,
)
from env_server.domains.retail.factories import (
    CustomerSpec,
    OrderItemSpec,
    PaymentMethodSpec,
    ProductSpec,
    PromotionSpec,
    RefundSpec,
    ShipmentSpec,
    WarrantyClaimSpec,
    delay_credit,
    method_label,
    payment,
    phone,
)
from env_server.domains.retail.factories import order as order_spec
from env_server.domains.retail.models import (
    ApprovalRequest,
    Customer,
    InventoryLevel,
    Order,
    OrderItem,
    Payment,
    PaymentMethod,
    Refund,
    Return,
    Shipment,
    StoreCredit,
    SupportTicket,
    WarrantyClaim,
)

TODAY = NOW.date()
CUSTOMER_COUNT = 150
HISTORY_DAYS = 200
_PRICES = {p.id: p.price_cents for p in PRODUCTS}

# fmt: off
_FIRST = (
    "Olivia", "Liam", "Emma", "Noah", "Ava", "Mateo", "Sophia", "Lucas", "Isabella", "Ethan",
    "Mia", "Amir", "Harper", "Kenji", "Chloe", "Diego", "Priya", "Jonas", "Leila", "Marcus", "Zoe",
    "Ravi", "Hannah", "Omar", "Grace", "Tomas", "Nora", "Elijah", "Aisha", "Felix", "Ingrid",
    "Samuel", "Yara", "Victor", "Lucia", "Dmitri",
)
_LAST = (
    "Nguyen", "Smith", "Garcia", "Johnson", "Patel", "Brown", "Kim", "Martinez", "Chen", "Davis",
    "Lopez", "Wilson", "Okafor", "Anderson", "Haddad", "Thomas", "Moreau", "Jackson", "Silva",
    "White", "Kowalski", "Harris", "Tanaka", "Clark", "Rossi", "Lewis", "Schmidt", "Walker",
    "Ibrahim", "Young", "Novak", "Allen",
)
_STREETS = (
    "Maple Ave", "Oak St", "Cedar Ln", "Pine Rd", "Elm St", "Lakeview Dr", "Sunset Blvd",
    "Hillcrest Rd", "Park Pl", "River Rd", "Willow Way", "Main St",
)
_CITIES = (
    ("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Portland", "OR", "972"),
    ("Chicago", "IL", "606"), ("Boston", "MA", "021"), ("Seattle", "WA", "981"),
    ("Atlanta", "GA", "303"), ("Phoenix", "AZ", "850"), ("Raleigh", "NC", "276"),
    ("Columbus", "OH", "432"), ("San Diego", "CA", "921"), ("Minneapolis", "MN", "554"),
)
# fmt: on
_TIER_WEIGHTS = {"basic": 45, "silver": 30, "gold": 18, "platinum": 7}
_CANCEL_REASONS = ("no_longer_needed", "ordered_by_mistake", "found_better_price", "delivery_too_slow")
_RETURN_REASONS = ("changed_mind", "defective", "damaged", "wrong_item", "not_as_described")
_TICKET_TEXT = {
    "product_question": "Asked whether the product supports a second monitor.",
    "billing": "Asked why the card statement shows two authorisations.",
    "account": "Asked to update the phone number on file.",
    "feedback": "Praised the packaging and the delivery speed.",
    "damaged_delivery": "Outer box crushed on arrival; contents checked and fine.",
    "missing_package": "Parcel marked delivered but not found; carrier located it at a neighbour.",
}


@dataclass
class _History:
    """Rows being generated, per table, plus the running ID counters."""

    customers: list[Customer] = field(default_factory=list)
    payment_methods: list[PaymentMethod] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)
    order_items: list[OrderItem] = field(default_factory=list)
    payments: list[Payment] = field(default_factory=list)
    shipments: list[Shipment] = field(default_factory=list)
    refunds: list[Refund] = field(default_factory=list)
    returns: list[Return] = field(default_factory=list)
    warranty_claims: list[WarrantyClaim] = field(default_factory=list)
    store_credits: list[StoreCredit] = field(default_factory=list)
    inventory: list[InventoryLevel] = field(default_factory=list)
    support_tickets: list[SupportTicket] = field(default_factory=list)
    approval_requests: list[ApprovalRequest] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=lambda: defaultdict(lambda: 10000))

    def next_id(self, prefix: str) -> str:
        """The next seeded ID for `prefix`: "OR-10001", "OR-10002", ..."""
        self.counters[prefix] += 1
        return f"{prefix}-{self.counters[prefix]}"

    def tables(self) -> list[Sequence[object]]:
        """Every generated table, parents before children."""
        return [
            self.customers,
            self.payment_methods,
            self.orders,
            self.order_items,
            self.payments,
            self.shipments,
            self.refunds,
            self.returns,
            self.warranty_claims,
            self.store_credits,
            self.inventory,
            self.support_tickets,
            self.approval_requests,
        ]


def seed(session: Session, rng: random.Random) -> None:
    """Fill an empty retail database: tiers, catalogue, promotions, customers and their order history.

    Args:
        session: a session on a database with the retail tables created and empty.
        rng: the only source of randomness.
    """
    session.add_all(t.orm() for t in TIERS)
    session.add_all(p.orm() for p in PRODUCTS)
    session.add_all(p.orm() for p in PROMOTIONS)
    session.flush()
    history = _History()
    accounts = _customers(history, rng)
    plans = [
        (customer, methods, _placed_at(rng))
        for customer, methods in accounts
        for _ in range(rng.choices((0, 1, 2, 3, 4), weights=(8, 30, 32, 20, 10))[0])
    ]
    for customer, methods, placed_at in sorted(plans, key=lambda plan: plan[2]):
        _order(history, rng, customer, methods, placed_at)
    _inventory(history, rng)
    _support_tickets(history, rng)
    for rows in history.tables():
        session.add_all(rows)
        session.flush()


def _customers(history: _History, rng: random.Random) -> list[tuple[Customer, list[PaymentMethod]]]:
    out: list[tuple[Customer, list[PaymentMethod]]] = []
    for n in range(1, CUSTOMER_COUNT + 1):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        city, state, zip_prefix = rng.choice(_CITIES)
        customer = CustomerSpec(
            id=history.next_id("CU"),
            first_name=first,
            last_name=last,
            email=f"{first.lower()}.{last.lower()}{n}@example.com",
            phone=phone(rng),
            address_line=f"{rng.randint(10, 9899)} {rng.choice(_STREETS)}",
            city=city,
            state=state,
            zip_code=f"{zip_prefix}{rng.randint(0, 99):02d}",
            tier=rng.choices(list(_TIER_WEIGHTS), weights=list(_TIER_WEIGHTS.values()))[0],
            store_credit_cents=0,
            member_since=date(2019, 1, 1) + timedelta(days=rng.randint(0, 2700)),
            status="active",
        ).orm()
        history.customers.append(customer)
        methods = [_payment_method(history, rng, customer.id, "credit_card")]
        if rng.random() < 0.35:
            methods.append(_payment_method(history, rng, customer.id, rng.choice(("paypal", "gift_card"))))
        out.append((customer, methods))
    return out


def _payment_method(history: _History, rng: random.Random, customer_id: str, kind: str) -> PaymentMethod:
    label = method_label(rng, kind)
    method = PaymentMethodSpec(history.next_id("PM"), customer_id, kind, label).orm()
    history.payment_methods.append(method)
    return method


def _placed_at(rng: random.Random) -> datetime:
    placed_at = datetime.combine(
        TODAY - timedelta(days=rng.randint(0, HISTORY_DAYS)), time(rng.randint(7, 22), rng.randint(0, 59))
    )
    return min(placed_at, NOW - timedelta(minutes=rng.randint(30, 600)))


def _order(
    history: _History,
    rng: random.Random,
    customer: Customer,
    methods: Sequence[PaymentMethod],
    placed_at: datetime,
) -> None:
    """One order with its lines, payment, shipment and after-sales events, consistent with its age."""
    age_days = (TODAY - placed_at.date()).days
    order_id = history.next_id("OR")
    products = rng.sample(PRODUCTS, rng.choices((1, 2, 3), weights=(60, 30, 10))[0])
    items = [_item(history, rng, order_id, p) for p in products]
    subtotal = sum(i.quantity * i.unit_price_cents for i in items)
    promo = _eligible_promo(rng, placed_at.date(), subtotal, customer.tier)
    discount = 0
    if promo is not None:
        discount = subtotal * promo.percent_off // 100 if promo.percent_off else promo.amount_off_cents or 0
    spec = order_spec(
        order_id,
        customer.id,
        status="processing",
        placed_at=placed_at,
        warehouse=rng.choice(("EAST", "WEST")),
        subtotal_cents=subtotal,
        discount_cents=discount,
        promo_code=promo.code if promo else None,
        promised_date=placed_at.date() + timedelta(days=5),
        ship_to=(customer.address_line, customer.city, customer.state, customer.zip_code),
    )
    order = spec.orm()
    history.orders.append(order)
    method = rng.choice(methods)
    history.payments.append(payment(history.next_id("PA"), spec, method.id).orm())
    if age_days <= 2:
        order.status = "pending" if age_days == 0 and rng.random() < 0.5 else "processing"
        return
    if age_days >= 6 and rng.random() < 0.05:
        order.status = "cancelled"
        order.cancel_reason = rng.choice(_CANCEL_REASONS)
        _refund(history, order, method.id, order.total_cents, "cancellation", placed_at + timedelta(hours=3))
        return
    shipment = _shipment(history, rng, order)
    order.status = "delivered" if shipment.status == "delivered" else "shipped"
    if shipment.delivered_on is not None:
        _after_sales(history, rng, customer, order, items, method.id, shipment.delivered_on)


def _item(history: _History, rng: random.Random, order_id: str, product: ProductSpec) -> OrderItem:
    cheap = product.price_cents < 10000
    markup = rng.choice((0, 0, 0, 0, 1000, 2000)) if product.price_cents > 20000 else 0
    item = OrderItemSpec(
        id=history.next_id("OI"),
        order_id=order_id,
        product_id=product.id,
        quantity=rng.choice((1, 1, 2, 3)) if cheap else 1,
        unit_price_cents=product.price_cents + markup,
        returned_quantity=0,
        protection_plan=product.price_cents >= 40000 and rng.random() < 0.25,
    ).orm()
    history.order_items.append(item)
    return item


def _eligible_promo(rng: random.Random, day: date, subtotal: int, tier: str) -> PromotionSpec | None:
    ranks = {t.code: t.rank for t in TIERS}
    eligible = [
        p
        for p in PROMOTIONS
        if p.valid_from <= day <= p.valid_until
        and subtotal >= p.min_subtotal_cents
        and (p.min_tier is None or ranks[tier] >= ranks[p.min_tier])
    ]
    if not eligible or rng.random() > 0.2:
        return None
    return rng.choice(eligible)


def _shipment(history: _History, rng: random.Random, order: Order) -> Shipment:
    carrier = rng.choice(("UPS", "FedEx", "USPS"))
    shipped_on = order.placed_at.date() + timedelta(days=rng.randint(1, 2))
    transit = rng.randint(2, 3) + (rng.randint(3, 7) if rng.random() < 0.12 else 0)
    delivered_on: date | None = shipped_on + timedelta(days=transit)
    status = "delivered"
    if rng.random() < 0.02:
        status, delivered_on = "lost", None
    elif delivered_on is not None and delivered_on >= TODAY:
        status, delivered_on = "in_transit", None
    shipment = ShipmentSpec(
        id=history.next_id("SH"),
        order_id=order.id,
        carrier=carrier,
        tracking_number=_tracking(rng, carrier),
        status=status,
        shipped_on=shipped_on,
        delivered_on=delivered_on,
    ).orm()
    history.shipments.append(shipment)
    return shipment


def _tracking(rng: random.Random, carrier: str) -> str:
    if carrier == "UPS":
        return "1Z" + "".join(rng.choice("0123456789ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(16))
    length = 12 if carrier == "FedEx" else 22
    return "".join(rng.choice("0123456789") for _ in range(length))


def _after_sales(
    history: _History,
    rng: random.Random,
    customer: Customer,
    order: Order,
    items: Iterable[OrderItem],
    method_id: str,
    delivered_on: date,
) -> None:
    """Delay compensation, returns, price adjustments and warranty claims of a delivered order."""
    delivered_at = datetime.combine(delivered_on, time(12, 0))
    late_days = (delivered_on - order.promised_date).days
    if late_days >= 3 and order.total_cents >= 15000 and rng.random() < 0.6:
        amount = min(order.total_cents // 10, 5000)
        history.store_credits.append(
            delay_credit(
                history.next_id("SC"), customer.id, order.id, amount, delivered_at + timedelta(days=1)
            ).orm()
        )
        customer.store_credit_cents += amount
    days_since = (TODAY - delivered_on).days
    for item in items:
        roll = rng.random()
        current_price = _PRICES[item.product_id]
        if roll < 0.07 and days_since >= 5:
            _seeded_return(history, rng, customer, order, item, method_id, delivered_at, days_since)
        elif roll < 0.10 and days_since >= 60:
            _seeded_claim(history, rng, customer, item, delivered_at)
        elif roll < 0.16 and item.unit_price_cents > current_price and customer.tier in ("gold", "platinum"):
            amount = (item.unit_price_cents - current_price) * item.quantity
            _refund(
                history,
                order,
                method_id,
                amount,
                "price_adjustment",
                delivered_at + timedelta(days=4),
                item.id,
            )


def _seeded_return(
    history: _History,
    rng: random.Random,
    customer: Customer,
    order: Order,
    item: OrderItem,
    method_id: str,
    delivered_at: datetime,
    days_since: int,
) -> None:
    reason = rng.choice(_RETURN_REASONS)
    waived = reason != "changed_mind" or customer.tier in ("gold", "platinum")
    fee = 0 if waived else RETURN_FEE_CENTS
    refund = item.unit_price_cents * item.quantity - fee
    status = "authorized" if days_since < 8 else rng.choice(("refunded", "refunded", "refunded", "rejected"))
    item.returned_quantity = 0 if status == "rejected" else item.quantity
    created = delivered_at + timedelta(days=rng.randint(1, min(days_since, 20)))
    history.returns.append(
        Return(
            id=history.next_id("RMA"),
            order_id=order.id,
            order_item_id=item.id,
            quantity=item.quantity,
            reason=reason,
            status=status,
            fee_cents=fee,
            refund_cents=refund,
            refund_payment_method_id=method_id,
            created_at=min(created, NOW),
        )
    )
    if refund > 100000:
        history.approval_requests.append(
            ApprovalRequest(
                id=history.next_id("AR"),
                customer_id=customer.id,
                order_id=order.id,
                order_item_id=item.id,
                kind="return",
                amount_cents=refund,
                status="rejected" if status == "rejected" else "approved",
                summary="High-value return reviewed by a supervisor.",
                created_at=min(created, NOW),
            )
        )
    if status == "refunded":
        _refund(history, order, method_id, refund, "return", created + timedelta(days=6))


def _seeded_claim(
    history: _History, rng: random.Random, customer: Customer, item: OrderItem, delivered_at: datetime
) -> None:
    issue = rng.choice(("defect", "defect", "battery", "accidental_damage"))
    status = "denied" if issue == "accidental_damage" and not item.protection_plan else "completed"
    history.warranty_claims.append(
        WarrantyClaimSpec(
            id=history.next_id("WC"),
            order_item_id=item.id,
            customer_id=customer.id,
            issue_type=issue,
            resolution="repair",
            status=status,
            description="Stopped working after a few weeks of normal use.",
            created_at=delivered_at + timedelta(days=rng.randint(40, 55)),
        ).orm()
    )


def _refund(
    history: _History,
    order: Order,
    method_id: str,
    amount: int,
    reason: str,
    at: datetime,
    item_id: str | None = None,
) -> None:
    history.refunds.append(
        RefundSpec(history.next_id("RF"), order.id, item_id, method_id, amount, reason, min(at, NOW)).orm()
    )


def _inventory(history: _History, rng: random.Random) -> None:
    """Stock per product and warehouse; unshipped orders hold reservations, a few items are sold out."""
    warehouse_of = {o.id: o.warehouse for o in history.orders if o.status in ("pending", "processing")}
    reserved: dict[tuple[str, str], int] = defaultdict(int)
    for item in history.order_items:
        if item.order_id in warehouse_of:
            reserved[(item.product_id, warehouse_of[item.order_id])] += item.quantity
    for product in PRODUCTS:
        for warehouse in ("EAST", "WEST"):
            held = reserved[(product.id, warehouse)]
            spare = 0 if rng.random() < 0.08 else rng.randint(3, 40)
            history.inventory.append(
                InventoryLevel(
                    id=f"INV-{product.id[3:]}-{warehouse}",
                    product_id=product.id,
                    warehouse=warehouse,
                    on_hand=held + spare,
                    reserved=held,
                )
            )


def _support_tickets(history: _History, rng: random.Random) -> None:
    for _ in range(45):
        customer = rng.choice(history.customers)
        category = rng.choice(list(_TICKET_TEXT))
        history.support_tickets.append(
            SupportTicket(
                id=history.next_id("TK"),
                customer_id=customer.id,
                order_id=None,
                product_id=None,
                category=category,
                status=rng.choice(("closed", "closed", "closed", "open")),
                summary=_TICKET_TEXT[category],
                created_at=NOW - timedelta(days=rng.randint(1, HISTORY_DAYS)),
            )
        )
