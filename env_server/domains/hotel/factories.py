"""Hotel entities, written once, for the seed (ORM rows), the families (patch rows) and the tool tests.

Each table has a spec (its columns, typed: dates as `date`, instants as `datetime`) and the rules that
derive one value from others live in a builder next to it: a card's label from its brand and digits, an
invoice's from the company, a booking's room charge from its total, a night's rate from the hotel tier's
base rate. Builders that draw (`phone`, `birth_date`, `nightly_rate`) draw from the caller's RNG in the
order the seed and the families always drew, so the seed's rows and the generated tasks stay the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Protocol

from env_server.domain import EntitySpec
from env_server.domains.hotel.models import (
    ApprovalRequest,
    Booking,
    BookingExtra,
    CorporateAccount,
    Guest,
    Hotel,
    LoyaltyTransaction,
    Payment,
    PaymentMethod,
    RoomNight,
    RoomType,
    SupportTicket,
)

PHONE_PREFIXES = ("+1312555", "+4915550", "+3519100", "+8175550", "+4477009")
CARD_BRANDS = ("Visa", "Mastercard", "Amex")


@dataclass
class HotelSpec(EntitySpec[Hotel], model=Hotel):
    """A hotel."""

    hotel_id: str
    name: str
    city: str
    tier: str


@dataclass
class RoomTypeSpec(EntitySpec[RoomType], model=RoomType):
    """A room category of a hotel."""

    room_type_id: str
    hotel_id: str
    name: str
    max_occupancy: int
    room_count: int


@dataclass
class RoomNightSpec(EntitySpec[RoomNight], model=RoomNight):
    """The rate and the unsold rooms of one room type on one night."""

    room_type_id: str
    night: date
    rate_cents: int
    rooms_available: int


@dataclass
class CorporateAccountSpec(EntitySpec[CorporateAccount], model=CorporateAccount):
    """A company with a negotiated discount."""

    account_id: str
    company_name: str
    discount_pct: int


@dataclass
class GuestSpec(EntitySpec[Guest], model=Guest):
    """A guest profile; a corporate traveler or coordinator names their account and role."""

    guest_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: date
    loyalty_tier: str
    loyalty_points: int
    corporate_account_id: str | None = None
    corporate_role: str | None = None


@dataclass
class PaymentMethodSpec(EntitySpec[PaymentMethod], model=PaymentMethod):
    """A guest's card or a company's invoice (see `card` and `invoice`)."""

    payment_method_id: str
    kind: str
    guest_id: str | None = field(default=None, kw_only=True)
    corporate_account_id: str | None = field(default=None, kw_only=True)
    label: str


@dataclass
class BookingSpec(EntitySpec[Booking], model=Booking):
    """A booking; `corporate_account_id` is always stated (None for a private booking)."""

    booking_id: str
    guest_id: str
    room_type_id: str
    corporate_account_id: str | None
    payment_method_id: str
    check_in: date
    check_out: date
    adults: int
    rate_plan: str
    status: str
    room_total_cents: int
    created_at: datetime
    cancelled_at: datetime | None = None
    cancellation_reason: str | None = None


@dataclass
class PaymentSpec(EntitySpec[Payment], model=Payment):
    """Money moved for a booking (see `room_charge`)."""

    payment_id: str
    booking_id: str
    payment_method_id: str
    kind: str
    purpose: str
    amount_cents: int
    created_at: datetime


@dataclass
class BookingExtraSpec(EntitySpec[BookingExtra], model=BookingExtra):
    """An extra added to a booking."""

    booking_id: str
    extra: str
    price_cents: int
    complimentary: bool


@dataclass
class LoyaltyTransactionSpec(EntitySpec[LoyaltyTransaction], model=LoyaltyTransaction):
    """Points earned for a stay, granted as goodwill for a ticket, or redeemed."""

    transaction_id: str
    guest_id: str
    booking_id: str | None = field(default=None, kw_only=True)
    ticket_id: str | None = field(default=None, kw_only=True)
    kind: str
    points: int
    created_at: datetime


@dataclass
class SupportTicketSpec(EntitySpec[SupportTicket], model=SupportTicket):
    """A problem a guest reported."""

    ticket_id: str
    guest_id: str
    booking_id: str | None
    category: str
    status: str
    summary: str
    created_at: datetime


@dataclass
class ApprovalRequestSpec(EntitySpec[ApprovalRequest], model=ApprovalRequest):
    """A change of a corporate booking waiting for (or refused by) a manager; every field is stated."""

    approval_id: str
    booking_id: str
    requested_by_guest_id: str
    change_type: str
    new_check_in: date | None
    new_check_out: date | None
    new_room_type_id: str | None
    status: str
    note: str
    created_at: datetime


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


def card(payment_method_id: str, guest_id: str, brand: str, digits: int) -> PaymentMethodSpec:
    """A guest's card, labelled as guests see it: "Visa ending 0042"."""
    return PaymentMethodSpec(
        payment_method_id, "card", guest_id=guest_id, label=f"{brand} ending {digits:04d}"
    )


def invoice(payment_method_id: str, account_id: str, company_name: str) -> PaymentMethodSpec:
    """A company's invoice payment method, labelled with the company's name (cut to the column's 40)."""
    return PaymentMethodSpec(
        payment_method_id,
        "corporate_invoice",
        corporate_account_id=account_id,
        label=f"Invoice: {company_name}"[:40],
    )


class Paid(Protocol):
    """What a payment needs of its booking (a `BookingSpec` or a seeded `Booking` row)."""

    @property
    def booking_id(self) -> str:
        """The booking paid for."""
        ...

    @property
    def payment_method_id(self) -> str:
        """What it was paid with."""
        ...


def room_charge(payment_id: str, booking: BookingSpec) -> PaymentSpec:
    """The charge of a booking's room total to its payment method, when it was booked."""
    return payment(payment_id, booking, "charge", "room", booking.room_total_cents, booking.created_at)


def payment(payment_id: str, booking: Paid, kind: str, purpose: str, cents: int, at: datetime) -> PaymentSpec:
    """Money moved for `booking` through its payment method."""
    return PaymentSpec(payment_id, booking.booking_id, booking.payment_method_id, kind, purpose, cents, at)
