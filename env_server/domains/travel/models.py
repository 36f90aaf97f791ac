"""Travel domain tables: an airline's flights, fares and seats, and the trips its customers book on them.

Enumerations are `Literal` aliases checked in the database by `CHECK` constraints (so SQLite and PostgreSQL
behave the same), money is integer cents, dates are `Date` and instants `DateTime`. All times are UTC.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import Boolean, CheckConstraint, Date, DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import IdentityVerificationTable, named_metadata, one_of

#: The domain's frozen clock: Thursday 1 October 2026, 09:00 UTC at the contact centre.
NOW = datetime(2026, 10, 1, 9, 0)

Cabin = Literal["economy", "business"]
FareClassCode = Literal["BASIC", "STANDARD", "FLEX", "BUSINESS"]
FlightStatus = Literal["scheduled", "delayed", "cancelled", "departed", "landed"]
DisruptionCause = Literal["weather", "air_traffic", "mechanical", "crew", "operational"]
LoyaltyTier = Literal["member", "silver", "gold", "platinum"]
PaymentMethodKind = Literal["credit_card", "voucher"]
ReservationStatus = Literal["confirmed", "cancelled"]
TripType = Literal["one_way", "round_trip"]
PaymentDirection = Literal["charge", "refund"]
PaymentPurpose = Literal["fare", "change", "upgrade", "baggage", "cancellation_refund"]
ReviewCategory = Literal["compensation", "refund_exception"]
ReviewStatus = Literal["pending", "approved", "rejected"]
MileageKind = Literal["flight", "missing_miles", "redemption", "bonus"]
AlertChannel = Literal["email", "sms"]


def percent(column: str) -> CheckConstraint:
    """A CHECK constraint keeping a percentage column within 0-100."""
    return CheckConstraint(f"{column} BETWEEN 0 AND 100", name=f"{column}_range")


class Base(DeclarativeBase):
    """Declarative base on the travel domain's own MetaData."""

    metadata = named_metadata()


class Airport(Base):
    """An airport the airline serves."""

    __tablename__ = "airports"

    code: Mapped[str] = mapped_column(String(3), primary_key=True, comment='IATA code, e.g. "JFK".')
    city: Mapped[str] = mapped_column(String(40), comment="City served.")
    name: Mapped[str] = mapped_column(String(80), comment="Airport name.")


class Flight(Base):
    """One departure of a scheduled flight number on one date, with its operational status."""

    __tablename__ = "flights"
    __table_args__ = (
        one_of("status", FlightStatus),
        one_of("disruption_cause", DisruptionCause),
        UniqueConstraint("flight_number", "departure_at", name="number_departure"),
        CheckConstraint("origin <> destination", name="distinct_endpoints"),
        CheckConstraint("arrival_at > departure_at", name="arrives_after_departure"),
        CheckConstraint("distance_miles > 0", name="distance_positive"),
        CheckConstraint("delay_minutes >= 0", name="delay_not_negative"),
        CheckConstraint(
            "(disruption_cause IS NULL) = (status <> 'cancelled' AND delay_minutes = 0)",
            name="cause_iff_disrupted",
        ),
    )

    flight_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "FL-10042"')
    flight_number: Mapped[str] = mapped_column(String(8), comment='Marketing number, e.g. "GS101".')
    origin: Mapped[str] = mapped_column(ForeignKey("airports.code"), comment="Departure airport.")
    destination: Mapped[str] = mapped_column(ForeignKey("airports.code"), comment="Arrival airport.")
    departure_at: Mapped[datetime] = mapped_column(DateTime, comment="Scheduled departure (UTC).")
    arrival_at: Mapped[datetime] = mapped_column(DateTime, comment="Scheduled arrival (UTC).")
    distance_miles: Mapped[int] = mapped_column(Integer, comment="Great-circle distance; the base of miles.")
    status: Mapped[str] = mapped_column(
        String(10), comment="scheduled, delayed (expected late), cancelled, departed or landed."
    )
    delay_minutes: Mapped[int] = mapped_column(
        Integer, default=0, comment="Arrival delay: actual for landed flights, expected for the others."
    )
    disruption_cause: Mapped[str | None] = mapped_column(
        String(12), comment="Why it is delayed or cancelled; null when on time."
    )


class SeatInventory(Base):
    """Seats and the current base price of one cabin of one flight."""

    __tablename__ = "seat_inventory"
    __table_args__ = (
        one_of("cabin", Cabin),
        CheckConstraint("seats_total > 0", name="seats_total_positive"),
        CheckConstraint("seats_available BETWEEN 0 AND seats_total", name="seats_available_range"),
        CheckConstraint("base_price_cents > 0", name="base_price_positive"),
    )

    flight_id: Mapped[str] = mapped_column(ForeignKey("flights.flight_id"), primary_key=True)
    cabin: Mapped[str] = mapped_column(String(10), primary_key=True, comment="economy or business.")
    seats_total: Mapped[int] = mapped_column(Integer, comment="Seats fitted in the cabin.")
    seats_available: Mapped[int] = mapped_column(Integer, comment="Seats still unsold.")
    base_price_cents: Mapped[int] = mapped_column(
        Integer, comment="Today's price of one seat before the fare class's price_pct is applied."
    )


class FareClass(Base):
    """A fare product: its cabin, price level and rules for changes, refunds, bags and miles."""

    __tablename__ = "fare_classes"
    __table_args__ = (
        one_of("cabin", Cabin),
        CheckConstraint("price_pct > 0", name="price_pct_positive"),
        CheckConstraint("change_fee_cents >= 0", name="change_fee_not_negative"),
        CheckConstraint("free_bags >= 0", name="free_bags_not_negative"),
        CheckConstraint("miles_pct >= 0", name="miles_pct_not_negative"),
        percent("refund_pct_week_plus"),
        percent("refund_pct_day_plus"),
        percent("refund_pct_last_day"),
    )

    code: Mapped[str] = mapped_column(
        String(10), primary_key=True, comment="BASIC, STANDARD, FLEX, BUSINESS."
    )
    name: Mapped[str] = mapped_column(String(40), comment="Name shown to customers.")
    cabin: Mapped[str] = mapped_column(String(10), comment="Cabin the fare sits in.")
    price_pct: Mapped[int] = mapped_column(Integer, comment="Price as a percentage of the cabin base price.")
    changeable: Mapped[bool] = mapped_column(Boolean, comment="Whether flights may be changed at all.")
    change_fee_cents: Mapped[int] = mapped_column(Integer, comment="Fee per traveller per changed flight.")
    free_bags: Mapped[int] = mapped_column(Integer, comment="Free checked bags per traveller.")
    miles_pct: Mapped[int] = mapped_column(Integer, comment="Miles earned as a percentage of distance.")
    refund_pct_week_plus: Mapped[int] = mapped_column(
        Integer, comment="Refund % of fares when cancelled 7 days (168 h) or more before departure."
    )
    refund_pct_day_plus: Mapped[int] = mapped_column(
        Integer, comment="Refund % when cancelled 24 h to under 7 days before departure."
    )
    refund_pct_last_day: Mapped[int] = mapped_column(
        Integer, comment="Refund % when cancelled under 24 h before departure."
    )


class Passenger(Base):
    """A customer profile: the person who holds reservations, payment methods and a loyalty account."""

    __tablename__ = "passengers"

    passenger_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "PX-10042"')
    first_name: Mapped[str] = mapped_column(String(40))
    last_name: Mapped[str] = mapped_column(String(40), comment="Checked by identity verification.")
    email: Mapped[str] = mapped_column(String(120), unique=True, comment="Unique login and contact address.")
    phone: Mapped[str] = mapped_column(String(24), comment="Contact phone.")
    date_of_birth: Mapped[date] = mapped_column(Date, comment="Checked by identity verification.")


class LoyaltyAccount(Base):
    """A passenger's frequent-flyer account; its tier adds baggage allowance and compensation."""

    __tablename__ = "loyalty_accounts"
    __table_args__ = (
        one_of("tier", LoyaltyTier),
        CheckConstraint("miles_balance >= 0", name="miles_not_negative"),
    )

    loyalty_id: Mapped[str] = mapped_column(
        String(10), primary_key=True, comment='Member number, "LY-10007".'
    )
    passenger_id: Mapped[str] = mapped_column(
        ForeignKey("passengers.passenger_id"), unique=True, comment="The member."
    )
    tier: Mapped[str] = mapped_column(String(10), comment="member, silver, gold or platinum.")
    miles_balance: Mapped[int] = mapped_column(Integer, comment="Redeemable miles.")
    enrolled_on: Mapped[date] = mapped_column(Date, comment="Date the member joined.")


class PaymentMethod(Base):
    """A passenger's credit card or travel voucher (vouchers carry a balance and are spent down)."""

    __tablename__ = "payment_methods"
    __table_args__ = (
        one_of("kind", PaymentMethodKind),
        CheckConstraint("balance_cents IS NULL OR balance_cents >= 0", name="balance_not_negative"),
        CheckConstraint(
            "(kind = 'voucher') = (balance_cents IS NOT NULL AND expires_on IS NOT NULL)",
            name="voucher_has_balance",
        ),
        CheckConstraint("(kind = 'credit_card') = (card_last4 IS NOT NULL)", name="card_has_number"),
    )

    payment_method_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "PM-10311"')
    passenger_id: Mapped[str] = mapped_column(ForeignKey("passengers.passenger_id"), comment="Owner.")
    kind: Mapped[str] = mapped_column(String(12), comment="credit_card or voucher.")
    card_brand: Mapped[str | None] = mapped_column(String(12), comment="Visa, Mastercard, Amex (cards only).")
    card_last4: Mapped[str | None] = mapped_column(String(4), comment="Last four digits (cards only).")
    balance_cents: Mapped[int | None] = mapped_column(Integer, comment="Remaining value (vouchers only).")
    expires_on: Mapped[date | None] = mapped_column(Date, comment="Last day the voucher can be used.")


class Reservation(Base):
    """A booked trip: one fare class for everyone on it, one or two flights, one to six travellers."""

    __tablename__ = "reservations"
    __table_args__ = (
        one_of("trip_type", TripType),
        one_of("status", ReservationStatus),
        CheckConstraint("(status = 'cancelled') = (cancelled_at IS NOT NULL)", name="cancelled_when_stamped"),
    )

    reservation_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "RS-10417"')
    holder_id: Mapped[str] = mapped_column(
        ForeignKey("passengers.passenger_id"), comment="Who booked it and alone may change it."
    )
    fare_class: Mapped[str] = mapped_column(
        ForeignKey("fare_classes.code"), comment="Fare of every traveller."
    )
    trip_type: Mapped[str] = mapped_column(String(10), comment="one_way or round_trip.")
    status: Mapped[str] = mapped_column(String(10), comment="confirmed or cancelled.")
    booked_at: Mapped[datetime] = mapped_column(DateTime, comment="When it was booked (the 24-hour rule).")
    cancelled_at: Mapped[datetime | None] = mapped_column(DateTime, comment="When it was cancelled.")
    cancel_reason: Mapped[str | None] = mapped_column(
        String(200), comment="The customer's reason, free text."
    )


class Traveler(Base):
    """A person flying on a reservation; their number is fixed once booked."""

    __tablename__ = "travelers"
    __table_args__ = (UniqueConstraint("reservation_id", "first_name", "last_name", name="name_once"),)

    traveler_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "TR-10880"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    passenger_id: Mapped[str | None] = mapped_column(
        ForeignKey("passengers.passenger_id"),
        comment="The traveller's own profile, when they are the holder.",
    )
    first_name: Mapped[str] = mapped_column(String(40), comment="As on the passport.")
    last_name: Mapped[str] = mapped_column(String(40), comment="As on the passport.")
    date_of_birth: Mapped[date] = mapped_column(Date)


class Segment(Base):
    """One flight of a reservation, flown by all of its travellers."""

    __tablename__ = "segments"
    __table_args__ = (
        one_of("cabin", Cabin),
        UniqueConstraint("reservation_id", "seq", name="seq_once"),
        CheckConstraint("seq IN (1, 2)", name="seq_range"),
        CheckConstraint("fare_cents > 0", name="fare_positive"),
    )

    segment_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "SG-10551"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    seq: Mapped[int] = mapped_column(Integer, comment="1 = outbound, 2 = return.")
    flight_id: Mapped[str] = mapped_column(ForeignKey("flights.flight_id"))
    cabin: Mapped[str] = mapped_column(String(10), comment="Cabin the travellers sit in.")
    fare_cents: Mapped[int] = mapped_column(
        Integer, comment="Ticket value of this flight per traveller; the base of refunds."
    )


class Baggage(Base):
    """Checked bags added for one traveller of a reservation, and the fee charged for them."""

    __tablename__ = "baggage"
    __table_args__ = (
        CheckConstraint("quantity BETWEEN 1 AND 4", name="quantity_range"),
        CheckConstraint("fee_cents >= 0", name="fee_not_negative"),
    )

    bag_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "BG-10020"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    traveler_id: Mapped[str] = mapped_column(ForeignKey("travelers.traveler_id"))
    quantity: Mapped[int] = mapped_column(Integer, comment="Bags added in this transaction.")
    fee_cents: Mapped[int] = mapped_column(Integer, comment="Fee charged for them (0 within the allowance).")


class Payment(Base):
    """Money moved for a reservation: a charge to, or a refund onto, one payment method."""

    __tablename__ = "payments"
    __table_args__ = (
        one_of("direction", PaymentDirection),
        one_of("purpose", PaymentPurpose),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
    )

    payment_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "PY-10200"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    payment_method_id: Mapped[str] = mapped_column(ForeignKey("payment_methods.payment_method_id"))
    direction: Mapped[str] = mapped_column(String(8), comment="charge or refund.")
    purpose: Mapped[str] = mapped_column(String(20), comment="fare, change, upgrade, baggage, refund.")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="Always positive; direction gives the sign.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When the money moved.")


class Compensation(Base):
    """Compensation for a disrupted flight, paid as a voucher; at most one per reservation and flight."""

    __tablename__ = "compensations"
    __table_args__ = (
        UniqueConstraint("reservation_id", "flight_id", name="once_per_flight"),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
    )

    compensation_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "CP-10003"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    flight_id: Mapped[str] = mapped_column(ForeignKey("flights.flight_id"), comment="The disrupted flight.")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="Total for all travellers.")
    voucher_id: Mapped[str] = mapped_column(
        ForeignKey("payment_methods.payment_method_id"), comment="The voucher it was paid into."
    )
    issued_at: Mapped[datetime] = mapped_column(DateTime)


class SupervisorReview(Base):
    """A request held for a supervisor's decision instead of being granted by the agent."""

    __tablename__ = "supervisor_reviews"
    __table_args__ = (
        one_of("category", ReviewCategory),
        one_of("status", ReviewStatus),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
    )

    review_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "SR-10004"')
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.reservation_id"))
    category: Mapped[str] = mapped_column(String(20), comment="compensation or refund_exception.")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="The amount the supervisor is asked to grant.")
    status: Mapped[str] = mapped_column(String(10), comment="pending, approved or rejected.")
    summary: Mapped[str] = mapped_column(String(500), comment="The agent's explanation, free text.")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class MileageTransaction(Base):
    """A movement of miles on a loyalty account."""

    __tablename__ = "mileage_transactions"
    __table_args__ = (
        one_of("kind", MileageKind),
        CheckConstraint("miles <> 0", name="miles_not_zero"),
    )

    transaction_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "MT-10090"')
    loyalty_id: Mapped[str] = mapped_column(ForeignKey("loyalty_accounts.loyalty_id"))
    reservation_id: Mapped[str | None] = mapped_column(ForeignKey("reservations.reservation_id"))
    flight_id: Mapped[str | None] = mapped_column(
        ForeignKey("flights.flight_id"), comment="The flight earned on."
    )
    kind: Mapped[str] = mapped_column(String(14), comment="flight, missing_miles, redemption or bonus.")
    miles: Mapped[int] = mapped_column(Integer, comment="Positive when earned, negative when spent.")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class FlightAlert(Base):
    """A subscription to status messages about one flight; anyone may subscribe, no account needed."""

    __tablename__ = "flight_alerts"
    __table_args__ = (
        one_of("channel", AlertChannel),
        UniqueConstraint("flight_id", "contact", name="contact_once"),
    )

    alert_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "FA-10012"')
    flight_id: Mapped[str] = mapped_column(ForeignKey("flights.flight_id"))
    channel: Mapped[str] = mapped_column(String(6), comment="email or sms.")
    contact: Mapped[str] = mapped_column(String(120), comment="Address or phone number messages go to.")
    created_at: Mapped[datetime] = mapped_column(DateTime)


class IdentityVerification(IdentityVerificationTable, Base):
    """A successful identity check of a passenger in the current conversation; write tools require one."""

    passenger_id: Mapped[str] = mapped_column(ForeignKey("passengers.passenger_id"))
