"""Building blocks of the retail scenario families: fresh customers and orders, and how customers talk.

A `Scene` collects the `initial_patch` of one generated task: a fresh customer (IDs from `ctx.new_id`, so no
seed row and no benchmark task shares them), their orders with lines, payment and shipment, and any stock
levels the scenario needs. Reference data (products, promotions) comes from `ctx.pick`, which only returns
rows no benchmark task mentions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, ClassVar

from env_server.domain import (
    Caller,
    GoldAction,
    ReferenceReply,
    ScenarioPatch,
    ScenarioUnavailable,
    call,
    patch_rows,
    refusal,
)
from env_server.domains.retail.catalog import RETURN_FEE_CENTS
from env_server.domains.retail.factories import (
    CustomerSpec,
    OrderItemSpec,
    PaymentMethodSpec,
    RefundSpec,
    ShipmentSpec,
    delay_credit,
    method_label,
    payment,
    phone,
)
from env_server.domains.retail.factories import order as order_spec
from env_server.domains.retail.families._policy import TIER, TIER_CODES, fee_waived

Row = dict[str, Any]

# fmt: off
_FIRST = (
    "Adele", "Bruno", "Camila", "Darius", "Elena", "Farid", "Gemma", "Hugo", "Imani", "Jasper", "Keiko",
    "Lorenzo", "Mariam", "Nikolai", "Odette", "Pablo", "Quinn", "Rosa", "Stefan", "Talia", "Umar",
    "Vera", "Wes", "Ximena", "Yusuf", "Zara",
)
_LAST = (
    "Abbott", "Bianchi", "Castillo", "Dubois", "Eklund", "Fischer", "Gallagher", "Hoang", "Iyer",
    "Jensen", "Kaur", "Lindqvist", "Mensah", "Nakamura", "O'Neill", "Petrov", "Quispe", "Reyes",
    "Sato", "Torres", "Usman", "Varga", "Weber", "Yilmaz", "Zhou",
)
_STREETS = (
    "Birch St", "Harbor Rd", "Juniper Ct", "Meadow Ln", "Orchard Ave", "Prospect St", "Quarry Rd",
    "Summit Ave", "Terrace Dr", "Valley View Rd", "Walnut St", "Garden Pl",
)
_CITIES = (
    ("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Portland", "OR", "972"), ("Chicago", "IL", "606"),
    ("Boston", "MA", "021"), ("Seattle", "WA", "981"), ("Atlanta", "GA", "303"), ("Phoenix", "AZ", "850"),
    ("Raleigh", "NC", "276"), ("Columbus", "OH", "432"), ("San Diego", "CA", "921"),
    ("Minneapolis", "MN", "554"),
)
_PERSONAS = (
    "polite and brief", "chatty, gives more detail than needed", "in a hurry, types in short bursts",
    "a little frustrated but reasonable", "careful, double-checks amounts", "friendly and relaxed",
)
# fmt: on
_TRACKING = {"UPS": "1ZGN", "FedEx": "7749", "USPS": "9405"}


def at(value: date, hour: int = 10, minute: int = 0) -> str:
    """An ISO timestamp on `value` (the patch format of `DateTime` columns)."""
    return datetime.combine(value, time(hour, minute)).isoformat()


def number(entity_id: str) -> int:
    """The digits of an ID: "OR-71234" -> 71234."""
    return int(entity_id.rsplit("-", 1)[1])


@dataclass
class Person(Caller):
    """A fresh customer and what they can tell the agent."""

    identity_tool: ClassVar[str] = "verify_customer_identity"

    id: str
    first_name: str
    last_name: str
    email: str
    zip_code: str
    tier: str
    address_line: str
    city: str
    state: str
    #: Payment method IDs, the first one a credit card.
    methods: list[str]
    #: Display labels of `methods`.
    labels: list[str]
    persona_style: str

    @property
    def name(self) -> str:
        """First and last name."""
        return f"{self.first_name} {self.last_name}"

    def identity_args(self) -> dict[str, Any]:
        """The identity check with the details the customer gives (rule 1)."""
        return {"email": self.email, "zip_code": self.zip_code}

    def identity_facts(self) -> dict[str, Any]:
        """The identity details the customer knows."""
        return {"email": self.email, "zip_code": self.zip_code}

    def identity_line(self) -> str:
        """What the customer says when asked to identify themselves."""
        return f"It's {self.email}, zip code {self.zip_code}."

    def persona(self, detail: str = "") -> str:
        """One line for the user simulator."""
        tier = TIER[self.tier].name
        extra = f"; {detail}" if detail else ""
        return f"{self.name}, a {tier} member in {self.city}; {self.persona_style}{extra}."


@dataclass
class Line:
    """An order line as written to the patch."""

    id: str
    product: Row
    quantity: int
    unit_price_cents: int
    protection_plan: bool = False

    @property
    def value(self) -> int:
        """Price paid for the whole line."""
        return self.quantity * self.unit_price_cents


@dataclass
class PlacedOrder:
    """An order as written to the patch, with what the families need to compute the policy outcome."""

    id: str
    customer: Person
    status: str
    placed_on: date
    warehouse: str
    lines: list[Line]
    subtotal_cents: int
    discount_cents: int
    total_cents: int
    payment_method_id: str
    promised_date: date
    shipment_id: str | None = None
    carrier: str | None = None


class Scene(ScenarioPatch):
    """The rows one generated task adds on top of the seed: customers, their orders, stock levels."""

    def customer(self, tier: str | None = None, extra_method: bool = False) -> Person:
        """A fresh customer with a credit card (and, with `extra_method`, PayPal or a gift card too)."""
        rng = self.rng
        customer_id = self.ctx.new_id("CU")
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        city, state, prefix = rng.choice(_CITIES)
        handle = f"{first}.{last}".lower().replace("'", "")
        person = Person(
            id=customer_id,
            first_name=first,
            last_name=last,
            email=f"{handle}{number(customer_id)}@example.net",
            zip_code=f"{prefix}{rng.randint(0, 99):02d}",
            tier=tier or rng.choice(TIER_CODES),
            address_line=f"{rng.randint(10, 9899)} {rng.choice(_STREETS)}",
            city=city,
            state=state,
            methods=[],
            labels=[],
            persona_style=rng.choice(_PERSONAS),
        )
        customer = CustomerSpec(
            id=person.id,
            first_name=first,
            last_name=last,
            email=person.email,
            phone=phone(rng),
            address_line=person.address_line,
            city=city,
            state=state,
            zip_code=person.zip_code,
            tier=person.tier,
            store_credit_cents=0,
            member_since=date(2015, 1, 1) + timedelta(days=rng.randint(0, 1800)),
            status="active",
        )
        self.add(patch_rows(customer))
        kinds = ["credit_card"]
        if extra_method:
            kinds.append(rng.choice(("paypal", "gift_card")))
        for kind in kinds:
            method_id = self.ctx.new_id("PM")
            label = method_label(rng, kind)
            person.methods.append(method_id)
            person.labels.append(label)
            self.add(patch_rows(PaymentMethodSpec(method_id, person.id, kind, label)))
        return person

    def address(self, near: Person | None = None) -> tuple[str, str, str, str]:
        """A fresh street address: line, city, state, zip (in `near`'s city when given)."""
        rng = self.rng
        if near is not None:
            city, state, prefix = near.city, near.state, near.zip_code[:3]
        else:
            city, state, prefix = rng.choice(_CITIES)
        line = f"{rng.randint(10, 9899)} {rng.choice(_STREETS)}"
        return line, city, state, f"{prefix}{rng.randint(0, 99):02d}"

    def product(self, where: Any = lambda _: True) -> Row:
        """A catalogue product no benchmark task mentions (`ScenarioUnavailable` if none fits)."""
        return self.ctx.pick("products", where=where)

    def line(self, product: Row, quantity: int = 1, markup: int = 0, plan: bool = False) -> Line:
        """A fresh order line (not yet attached to an order)."""
        return Line(self.ctx.new_id("OI"), product, quantity, product["price_cents"] + markup, plan)

    def order(
        self,
        person: Person,
        lines: list[Line],
        *,
        status: str,
        placed_on: date,
        method: int = 0,
        promised_days: int = 5,
        promo_code: str | None = None,
        discount_cents: int = 0,
        refunds: tuple[tuple[str, int], ...] = (),
        ship_to: tuple[str, str, str, str] | None = None,
    ) -> PlacedOrder:
        """A fresh order of `person` with its lines and payment (shipments are added separately)."""
        rng = self.rng
        order_id = self.ctx.new_id("OR")
        subtotal = sum(line.value for line in lines)
        placed_at = datetime.combine(placed_on, time(rng.randint(7, 21), rng.randint(0, 59)))
        spec = order_spec(
            order_id,
            person.id,
            status=status,
            placed_at=placed_at,
            warehouse=rng.choice(("EAST", "WEST")),
            subtotal_cents=subtotal,
            discount_cents=discount_cents,
            promo_code=promo_code,
            promised_date=placed_on + timedelta(days=promised_days),
            ship_to=ship_to or (person.address_line, person.city, person.state, person.zip_code),
        )
        order = PlacedOrder(
            id=order_id,
            customer=person,
            status=status,
            placed_on=placed_on,
            warehouse=spec.warehouse,
            lines=lines,
            subtotal_cents=subtotal,
            discount_cents=discount_cents,
            total_cents=spec.total_cents,
            payment_method_id=person.methods[method],
            promised_date=spec.promised_date,
        )
        items = [
            OrderItemSpec(
                line.id,
                order_id,
                line.product["id"],
                line.quantity,
                line.unit_price_cents,
                0,
                line.protection_plan,
            )
            for line in lines
        ]
        self.add(patch_rows(spec, *items, payment(self.ctx.new_id("PA"), spec, order.payment_method_id)))
        for reason, amount in refunds:
            self.refund(order, amount, reason, placed_on + timedelta(days=1))
        return order

    def ship(
        self, order: PlacedOrder, status: str, shipped_on: date, delivered_on: date | None = None
    ) -> None:
        """Add the order's shipment (`delivered_on` is set iff the status is delivered)."""
        carrier = self.rng.choice(tuple(_TRACKING))
        shipment_id = self.ctx.new_id("SH")
        tail = "".join(self.rng.choice("0123456789") for _ in range(8))
        order.shipment_id, order.carrier = shipment_id, carrier
        tracking = f"{_TRACKING[carrier]}{number(shipment_id)}{tail}"
        shipment = ShipmentSpec(shipment_id, order.id, carrier, tracking, status, shipped_on, delivered_on)
        self.add(patch_rows(shipment))

    def delivered(self, person: Person, lines: list[Line], delivered_on: date, **kwargs: Any) -> PlacedOrder:
        """A delivered order: placed and shipped a few days before `delivered_on`, promised on time."""
        transit = self.rng.randint(2, 4)
        placed_on = delivered_on - timedelta(days=transit + 1)
        order = self.order(person, lines, status="delivered", placed_on=placed_on, **kwargs)
        self.ship(order, "delivered", placed_on + timedelta(days=1), delivered_on)
        return order

    def refund(
        self, order: PlacedOrder, amount: int, reason: str, on: date, item_id: str | None = None
    ) -> None:
        """An earlier refund on `order`, to its payment method."""
        refund_id, when = self.ctx.new_id("RF"), datetime.combine(on, time(12))
        self.add(
            patch_rows(
                RefundSpec(refund_id, order.id, item_id, order.payment_method_id, amount, reason, when)
            )
        )

    def credit(self, order: PlacedOrder, amount: int, on: date) -> None:
        """An earlier delay compensation for `order`, added to the customer's balance."""
        credit_id = self.ctx.new_id("SC")
        self.add(
            patch_rows(
                delay_credit(credit_id, order.customer.id, order.id, amount, datetime.combine(on, time(12)))
            )
        )
        row = next(r for r in self.patch["customers"] if r["id"] == order.customer.id)
        row["store_credit_cents"] += amount

    def stock(self, product_id: str, warehouse: str, *, available: int, reserve: int = 0) -> None:
        """Overwrite a seed inventory row: `available` units free, plus `reserve` more units held."""
        rows = self.ctx.rows(
            "inventory", where=lambda r: r["product_id"] == product_id and r["warehouse"] == warehouse
        )
        if not rows:
            raise ScenarioUnavailable(f"no usable inventory row for {product_id} in {warehouse}")
        reserved = rows[0]["reserved"] + reserve
        self.patch["inventory"].append(
            {"id": rows[0]["id"], "on_hand": reserved + available, "reserved": reserved}
        )


#: What fixes the values policy rules name outright (a task's `determined_by`).
DELAY_CREDIT = {
    "store_credits.reason": "policy 9: delay compensation is issued with reason delay_compensation (never "
    "goodwill)"
}
PRICE_REFUND = {
    "refunds.reason": "policy 10: price protection is refunded with reason price_adjustment",
    "refunds.order_item_id": "policy 10: price protection is refunded with the order line",
}
RETURN_HOLD = {
    "approval_requests.kind": "policy 8: a return whose refund is above $1,000 is held as a request of kind "
    "return",
    "approval_requests.order_item_id": "policy 8: a return's approval request names the order line",
}


#: Rule 6 on the return reason code (which also decides the fee).
RETURN_RULE = "policy 6: the return reason (it decides the fee)"


def said_reason(column: str, rule: str, said: str, code: str) -> dict[str, str]:
    """`determined_by` of a reason code fixed by the customer's words ("I changed my mind": changed_mind)."""
    return {column: f'{rule}; user (line 0): "{said}" ({code})'}


def names_figure(name: str, figure: int) -> bool:
    """Whether a product name holds `figure` as a number ("Aero 14 Laptop", "Laptop Sleeve 14in").

    A customer who names such a product says the figure before the agent can tell it as a rule's limit, and
    an echo of the customer earns nothing: families that tell a limit pick other products.
    """
    return re.search(rf"(?<![\d.,]){figure}(?![\d,]|\.\d)", name) is not None


def order_refusal(
    person: Person, order: PlacedOrder, wrong: GoldAction, tag: str, tell: str, said: ReferenceReply
) -> dict[str, Any]:
    """The task fields of a refusal: looking the order up changes nothing; verifying and doing `wrong` fails.

    A refusal changes nothing, so only what the agent says tells it from doing nothing: `tell` is the
    decisive fact of the refusal, which the agent must give.

    Args:
        person: the customer asking.
        order: the order asked about.
        wrong: the write the policy refuses.
        tag: the difficulty tag of the refused request, e.g. "price-protection".
        tell: the `communicate` item: an amount, date or count, or a single term such as "shipped".
        said: how a good agent tells it (`reply(...)`).
    """
    return {
        "difficulty_tags": ["refusal", tag, "communicate", "generated"],
        **refusal(tell, said, reads=[call("get_order", order_id=order.id)], wrong=[person.verify(), wrong]),
    }


#: How customers describe each return reason (rule 6 decides the fee from the reason).
RETURN_REASON_TEXT: dict[str, tuple[str, ...]] = {
    "changed_mind": (
        "it works fine, I just changed my mind",
        "I don't need it after all - nothing wrong with it",
        "honestly I just don't like it as much as I thought",
    ),
    "defective": ("it stopped working after a couple of days", "it won't power on anymore"),
    "damaged": ("it arrived with a cracked casing", "the box was crushed and it's dented"),
    "wrong_item": (
        "you sent me a different model than I ordered",
        "the item in the box isn't what I ordered",
    ),
    "not_as_described": (
        "it's missing features the listing promised",
        "it doesn't match the description at all",
    ),
}


def return_terms(person: Person, line: Line, quantity: int, reason: str) -> tuple[bool, int]:
    """Rule 6: whether the return fee is waived, and the refund the return would pay (as `create_return`)."""
    waived = fee_waived(person.tier, reason)
    fee = 0 if waived else RETURN_FEE_CENTS
    return waived, max(line.unit_price_cents * quantity - fee, 0)
