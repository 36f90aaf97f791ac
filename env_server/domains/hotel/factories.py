"""Hotel builders: the rules that derive one column from others, each returning ORM objects.

The models are the spec of every row (`models.py` declares each column once, with a typed keyword
constructor), so the seed, the families and the tool tests build `Guest(...)`, `Booking(...)` directly; what
lives here is only what is derived: a card's label from its brand and digits, an invoice's from the company,
a booking's room charge from its total, a night's rate from the hotel tier's base rate. Builders that draw
(`phone`, `birth_date`, `nightly_rate`) draw from the caller's RNG in the order the seed and the families
always drew, so the seed's rows and the generated tasks stay the same.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

from env_server.domains.hotel.models import Booking, Payment, PaymentKind, PaymentMethod, PaymentPurpose

PHONE_PREFIXES = ("+1312555", "+4915550", "+3519100", "+8175550", "+4477009")
CARD_BRANDS = ("Visa", "Mastercard", "Amex")


def phone(rng: random.Random) -> str:
    """A drawn phone number in one of the seed's country prefixes (E.164, no spaces)."""
    return rng.choice(PHONE_PREFIXES) + f"{rng.randint(0, 9999):04d}"


def birth_date(rng: random.Random) -> date:
    """A drawn date of birth between 1950 and 2003."""
    return date(1950, 1, 1) + timedelta(days=rng.randint(0, 19_500))


def nightly_rate(rng: random.Random, base_dollars: int, night: date) -> int:
    """A night's public rate in cents: the base rate, 15% more on Friday and Saturday, a drawn +-5%."""
    weekend = 1.15 if night.weekday() in (4, 5) else 1.0
    return round(base_dollars * weekend * rng.uniform(0.95, 1.08)) * 100


def card(payment_method_id: str, guest_id: str, brand: str, digits: int) -> PaymentMethod:
    """A guest's card, labelled as guests see it: "Visa ending 0042"."""
    return PaymentMethod(
        payment_method_id=payment_method_id,
        kind="card",
        guest_id=guest_id,
        label=f"{brand} ending {digits:04d}",
    )


def invoice(payment_method_id: str, account_id: str, company_name: str) -> PaymentMethod:
    """A company's invoice payment method, labelled with the company's name (cut to the column's 40)."""
    return PaymentMethod(
        payment_method_id=payment_method_id,
        kind="corporate_invoice",
        corporate_account_id=account_id,
        label=f"Invoice: {company_name}"[:40],
    )


def room_charge(payment_id: str, booking: Booking) -> Payment:
    """The charge of a booking's room total to its payment method, when it was booked."""
    return payment(payment_id, booking, "charge", "room", booking.room_total_cents, booking.created_at)


def payment(
    payment_id: str, booking: Booking, kind: PaymentKind, purpose: PaymentPurpose, cents: int, at: datetime
) -> Payment:
    """Money moved for `booking` through its payment method."""
    return Payment(
        payment_id=payment_id,
        booking_id=booking.booking_id,
        payment_method_id=booking.payment_method_id,
        kind=kind,
        purpose=purpose,
        amount_cents=cents,
        created_at=at,
    )
