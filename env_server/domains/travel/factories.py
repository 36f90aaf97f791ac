"""Travel entities, written once, for the seed (ORM rows), the families (patch rows) and the tool tests.

A passenger with their card and loyalty account, a flight with its seat inventory, a reservation with its
travellers, segments, payments and bags: each is a spec of its table's columns. The drawing builder
(`phone`) draws from the caller's RNG in the order the seed and the families always drew, so the seed's
rows and the generated tasks stay the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime

from env_server.domain import EntitySpec
from env_server.domains.travel.models import (
    Baggage,
    Flight,
    LoyaltyAccount,
    MileageTransaction,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    SeatInventory,
    Segment,
    Traveler,
)


@dataclass
class PassengerSpec(EntitySpec[Passenger], model=Passenger):
    """A passenger profile."""

    passenger_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: date


@dataclass
class PaymentMethodSpec(EntitySpec[PaymentMethod], model=PaymentMethod):
    """A passenger's credit card (brand and last four) or voucher (balance and expiry)."""

    payment_method_id: str
    passenger_id: str
    kind: str
    card_brand: str | None = None
    card_last4: str | None = None
    balance_cents: int | None = None
    expires_on: date | None = None


@dataclass
class LoyaltyAccountSpec(EntitySpec[LoyaltyAccount], model=LoyaltyAccount):
    """A passenger's frequent-flyer account."""

    loyalty_id: str
    passenger_id: str
    tier: str
    miles_balance: int
    enrolled_on: date


@dataclass
class MileageTransactionSpec(EntitySpec[MileageTransaction], model=MileageTransaction):
    """Miles earned (positive) or spent (negative) on a loyalty account, with the flight earned on."""

    transaction_id: str
    loyalty_id: str
    reservation_id: str | None
    flight_id: str | None
    kind: str
    miles: int
    created_at: datetime


@dataclass
class FlightSpec(EntitySpec[Flight], model=Flight):
    """One departure of a route; `disruption_cause` is always stated (None when on time)."""

    flight_id: str
    flight_number: str
    origin: str
    destination: str
    departure_at: datetime
    arrival_at: datetime
    distance_miles: int
    status: str
    delay_minutes: int
    disruption_cause: str | None


@dataclass
class SeatInventorySpec(EntitySpec[SeatInventory], model=SeatInventory):
    """The seats of one cabin of a flight."""

    flight_id: str
    cabin: str
    seats_total: int
    seats_available: int
    base_price_cents: int


@dataclass
class ReservationSpec(EntitySpec[Reservation], model=Reservation):
    """A reservation; a cancelled one states when and why."""

    reservation_id: str
    holder_id: str
    fare_class: str
    trip_type: str
    status: str
    booked_at: datetime
    cancelled_at: datetime | None = None
    cancel_reason: str | None = None


@dataclass
class TravelerSpec(EntitySpec[Traveler], model=Traveler):
    """A person flying on a reservation; `passenger_id` is stated (the holder's, or None)."""

    traveler_id: str
    reservation_id: str
    passenger_id: str | None
    first_name: str
    last_name: str
    date_of_birth: date


@dataclass
class SegmentSpec(EntitySpec[Segment], model=Segment):
    """One flight of a reservation, at the fare paid per traveller."""

    segment_id: str
    reservation_id: str
    seq: int
    flight_id: str
    cabin: str
    fare_cents: int


@dataclass
class PaymentSpec(EntitySpec[Payment], model=Payment):
    """Money moved on a reservation."""

    payment_id: str
    reservation_id: str
    payment_method_id: str
    direction: str
    purpose: str
    amount_cents: int
    created_at: datetime


@dataclass
class BaggageSpec(EntitySpec[Baggage], model=Baggage):
    """Bags checked for a traveller."""

    bag_id: str
    reservation_id: str
    traveler_id: str
    quantity: int
    fee_cents: int


def phone(rng: random.Random) -> str:
    """A drawn US phone number, "+1-415-555-0123"."""
    return f"+1-{rng.randint(201, 989)}-555-{rng.randint(0, 9999):04d}"


def card(payment_method_id: str, passenger_id: str, brand: str, last4: str) -> PaymentMethodSpec:
    """A passenger's credit card."""
    return PaymentMethodSpec(
        payment_method_id, passenger_id, "credit_card", card_brand=brand, card_last4=last4
    )
