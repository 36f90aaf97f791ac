"""Hotel domain tables: hotels and their nightly room inventory, guests, bookings and the money around them.

Each table is declared once, as a mapped dataclass: the class is its columns, its typed keyword constructor
(`Guest(guest_id=..., ...)`; a nullable column with `default=None` may be left out), its "not found" refusal
(`Guest.get_or_refuse(session, guest_id)`) and the view-only relationships the tool views list
(`guest.payment_methods`). The seed, the families and the tool tests build these objects directly. A column
with a default also says `kw_only=True`, which the base already implies, because mypy does not inherit it.

Enumerations are `Literal` aliases, spelled once: the column's type and its `CHECK` constraint (so SQLite and
PostgreSQL behave the same) both come from the alias. Money is integer cents, dates are `Date` and instants
`DateTime`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import Boolean, CheckConstraint, Date, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedAsDataclass, mapped_column, relationship

from env_server.domain import Entity, IdentityVerificationRecord, named_metadata, one_of

#: The domain's frozen clock: Thursday 1 October 2026, 09:00 at the service desk.
NOW = datetime(2026, 10, 1, 9, 0)

HotelTier = Literal["budget", "standard", "premium", "luxury"]
LoyaltyTier = Literal["blue", "silver", "gold", "platinum"]
CorporateRole = Literal["traveler", "coordinator"]
PaymentMethodKind = Literal["card", "corporate_invoice"]
RatePlan = Literal["flexible", "non_refundable"]
BookingStatus = Literal["confirmed", "checked_in", "checked_out", "cancelled", "no_show"]
ExtraKind = Literal["breakfast", "parking", "late_checkout"]
PaymentKind = Literal["charge", "refund"]
PaymentPurpose = Literal["room", "price_difference", "change_fee", "cancellation_refund"]
ChangeType = Literal["change_dates", "change_room_type", "cancel"]
ApprovalStatus = Literal["pending", "approved", "rejected"]
TicketCategory = Literal["noise", "cleanliness", "maintenance", "billing", "other"]
TicketStatus = Literal["open", "resolved"]
LoyaltyTransactionKind = Literal["stay", "goodwill", "redemption"]


class Base(MappedAsDataclass, DeclarativeBase, kw_only=True, eq=False):
    """Declarative base on the hotel domain's own MetaData: every table a keyword-only dataclass.

    `eq=False` keeps identity equality and hashing, as the session and the seed's dicts of rows expect.
    """

    metadata = named_metadata()


class Hotel(Entity, Base):
    """A property of the chain. Its tier sets the refund and change-fee windows (policy rules 5 and 8)."""

    not_found = "Hotel {key} not found (hotel IDs look like H-03)"
    __tablename__ = "hotels"
    __table_args__ = (one_of("tier", HotelTier),)

    hotel_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "H-03"')
    name: Mapped[str] = mapped_column(String(80), comment="Name shown to guests.")
    city: Mapped[str] = mapped_column(String(40), comment="City the hotel is in.")
    tier: Mapped[HotelTier] = mapped_column(
        String(10), comment="Service tier: budget, standard, premium, luxury."
    )
    room_types: Mapped[list[RoomType]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="RoomType.room_type_id"
    )


class RoomType(Entity, Base):
    """A category of rooms at one hotel (e.g. its Deluxe King rooms)."""

    not_found = "Room type {key} not found (room type IDs look like RT-03-DLX)"
    __tablename__ = "room_types"
    __table_args__ = (
        CheckConstraint("max_occupancy BETWEEN 1 AND 6", name="max_occupancy_range"),
        CheckConstraint("room_count > 0", name="room_count_positive"),
    )

    room_type_id: Mapped[str] = mapped_column(String(12), primary_key=True, comment='e.g. "RT-03-DLX"')
    hotel_id: Mapped[str] = mapped_column(ForeignKey("hotels.hotel_id"), comment="The hotel it belongs to.")
    name: Mapped[str] = mapped_column(String(40), comment='Category name, e.g. "Deluxe King".')
    max_occupancy: Mapped[int] = mapped_column(Integer, comment="Most adults one room sleeps.")
    room_count: Mapped[int] = mapped_column(Integer, comment="Rooms of this category at the hotel.")


class RoomNight(Base):
    """Inventory and price of one room type for one night; rates are loaded for a rolling window."""

    __tablename__ = "room_inventory"
    __table_args__ = (
        CheckConstraint("rate_cents > 0", name="rate_positive"),
        CheckConstraint("rooms_available >= 0", name="rooms_available_not_negative"),
    )

    room_type_id: Mapped[str] = mapped_column(ForeignKey("room_types.room_type_id"), primary_key=True)
    night: Mapped[date] = mapped_column(Date, primary_key=True, comment="The night (the date it begins).")
    rate_cents: Mapped[int] = mapped_column(Integer, comment="Public flexible rate for the night, in cents.")
    rooms_available: Mapped[int] = mapped_column(Integer, comment="Rooms still unsold for the night.")


class CorporateAccount(Entity, Base):
    """A company with a negotiated rate; its bookings are invoiced to the company."""

    not_found = "Corporate account {key} not found (account IDs look like CA-02)"
    __tablename__ = "corporate_accounts"
    __table_args__ = (CheckConstraint("discount_pct BETWEEN 0 AND 30", name="discount_range"),)

    account_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "CA-02"')
    company_name: Mapped[str] = mapped_column(String(80), comment="Legal name of the company.")
    discount_pct: Mapped[int] = mapped_column(Integer, comment="Negotiated discount on public rates, %.")


class Guest(Entity, Base):
    """A person known to the chain: loyalty member, and possibly linked to a corporate account."""

    not_found = "Guest {key} not found (guest IDs look like G-1042)"
    __tablename__ = "guests"
    __table_args__ = (
        one_of("loyalty_tier", LoyaltyTier),
        one_of("corporate_role", CorporateRole),
        CheckConstraint("loyalty_points >= 0", name="points_not_negative"),
        CheckConstraint(
            "(corporate_account_id IS NULL) = (corporate_role IS NULL)", name="corporate_link_complete"
        ),
    )

    guest_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "G-0042"')
    first_name: Mapped[str] = mapped_column(String(40), comment="Given name.")
    last_name: Mapped[str] = mapped_column(String(40), comment="Checked by identity verification.")
    email: Mapped[str] = mapped_column(String(120), unique=True, comment="Unique contact address.")
    phone: Mapped[str] = mapped_column(String(24), comment="Contact phone, E.164.")
    date_of_birth: Mapped[date] = mapped_column(
        Date, comment="Checked by identity verification; never shown."
    )
    loyalty_tier: Mapped[LoyaltyTier] = mapped_column(String(10), comment="blue, silver, gold or platinum.")
    loyalty_points: Mapped[int] = mapped_column(Integer, comment="Current points balance.")
    corporate_account_id: Mapped[str | None] = mapped_column(
        ForeignKey("corporate_accounts.account_id"),
        default=None,
        kw_only=True,
        comment="The employer's corporate account, if any.",
    )
    corporate_role: Mapped[CorporateRole | None] = mapped_column(
        String(12),
        default=None,
        kw_only=True,
        comment="traveler, or coordinator (may book and change the account's bookings).",
    )
    payment_methods: Mapped[list[PaymentMethod]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="PaymentMethod.payment_method_id"
    )


class PaymentMethod(Entity, Base):
    """A guest's card, or a corporate account's invoice arrangement."""

    not_found = "Payment method {key} not found (IDs look like PM-1107)"
    __tablename__ = "payment_methods"
    __table_args__ = (
        one_of("kind", PaymentMethodKind),
        CheckConstraint(
            "(kind = 'card' AND guest_id IS NOT NULL AND corporate_account_id IS NULL)"
            " OR (kind = 'corporate_invoice' AND guest_id IS NULL AND corporate_account_id IS NOT NULL)",
            name="owner_matches_kind",
        ),
    )

    payment_method_id: Mapped[str] = mapped_column(String(8), primary_key=True, comment='e.g. "PM-0107"')
    kind: Mapped[PaymentMethodKind] = mapped_column(String(20), comment="card or corporate_invoice.")
    guest_id: Mapped[str | None] = mapped_column(
        ForeignKey("guests.guest_id"), default=None, kw_only=True, comment="Card holder."
    )
    corporate_account_id: Mapped[str | None] = mapped_column(
        ForeignKey("corporate_accounts.account_id"), default=None, kw_only=True, comment="Invoiced company."
    )
    label: Mapped[str] = mapped_column(String(40), comment='Display name, e.g. "Visa ending 4242".')


class Booking(Entity, Base):
    """A reservation of one room of one room type for a range of nights."""

    not_found = "Booking {key} not found (booking IDs look like BK-10417)"
    __tablename__ = "bookings"
    __table_args__ = (
        one_of("rate_plan", RatePlan),
        one_of("status", BookingStatus),
        CheckConstraint("check_out > check_in", name="stay_not_empty"),
        CheckConstraint("adults BETWEEN 1 AND 6", name="adults_range"),
        CheckConstraint("room_total_cents >= 0", name="total_not_negative"),
        CheckConstraint(
            "corporate_account_id IS NULL OR rate_plan = 'flexible'", name="corporate_rate_is_flexible"
        ),
        CheckConstraint("(status = 'cancelled') = (cancelled_at IS NOT NULL)", name="cancelled_when_stamped"),
    )

    booking_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "BK-10417"')
    guest_id: Mapped[str] = mapped_column(ForeignKey("guests.guest_id"), comment="The guest who stays.")
    room_type_id: Mapped[str] = mapped_column(ForeignKey("room_types.room_type_id"))
    corporate_account_id: Mapped[str | None] = mapped_column(
        ForeignKey("corporate_accounts.account_id"), comment="Set for corporate-rate bookings."
    )
    payment_method_id: Mapped[str] = mapped_column(
        ForeignKey("payment_methods.payment_method_id"), comment="Charged and refunded for this booking."
    )
    check_in: Mapped[date] = mapped_column(Date, comment="Arrival date (first night).")
    check_out: Mapped[date] = mapped_column(
        Date, comment="Departure date (the morning after the last night)."
    )
    adults: Mapped[int] = mapped_column(Integer, comment="Adults staying in the room.")
    rate_plan: Mapped[RatePlan] = mapped_column(
        String(16), comment="flexible, or non_refundable (10% cheaper)."
    )
    status: Mapped[BookingStatus] = mapped_column(
        String(12), comment="Lifecycle state; only confirmed ones change."
    )
    room_total_cents: Mapped[int] = mapped_column(Integer, comment="Price of the room for the whole stay.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When it was booked.")
    cancelled_at: Mapped[datetime | None] = mapped_column(
        DateTime, default=None, kw_only=True, comment="When it was cancelled."
    )
    cancellation_reason: Mapped[str | None] = mapped_column(
        String(200), default=None, kw_only=True, comment="Free text from the guest."
    )
    extras: Mapped[list[BookingExtra]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="BookingExtra.extra"
    )
    payments: Mapped[list[Payment]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="Payment.payment_id"
    )
    approval_requests: Mapped[list[ApprovalRequest]] = relationship(
        viewonly=True, init=False, repr=False, kw_only=True, order_by="ApprovalRequest.approval_id"
    )


class BookingExtra(Base):
    """An add-on to a booking, billed at check-out (so adding one moves no money now)."""

    __tablename__ = "booking_extras"
    __table_args__ = (
        one_of("extra", ExtraKind),
        CheckConstraint(
            "(complimentary AND price_cents = 0) OR (NOT complimentary AND price_cents > 0)",
            name="price_matches_complimentary",
        ),
    )

    booking_id: Mapped[str] = mapped_column(ForeignKey("bookings.booking_id"), primary_key=True)
    extra: Mapped[ExtraKind] = mapped_column(
        String(16), primary_key=True, comment="breakfast, parking, late_checkout."
    )
    price_cents: Mapped[int] = mapped_column(Integer, comment="What the guest will pay at check-out.")
    complimentary: Mapped[bool] = mapped_column(Boolean, comment="Waived under the loyalty rules.")


class Payment(Base):
    """Money moved for a booking: a charge to, or a refund onto, the booking's payment method."""

    __tablename__ = "payments"
    __table_args__ = (
        one_of("kind", PaymentKind),
        one_of("purpose", PaymentPurpose),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
        CheckConstraint(
            "(kind = 'charge' AND purpose IN ('room', 'price_difference', 'change_fee'))"
            " OR (kind = 'refund' AND purpose IN ('price_difference', 'cancellation_refund'))",
            name="purpose_matches_kind",
        ),
    )

    payment_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "PAY-10002"')
    booking_id: Mapped[str] = mapped_column(ForeignKey("bookings.booking_id"))
    payment_method_id: Mapped[str] = mapped_column(ForeignKey("payment_methods.payment_method_id"))
    kind: Mapped[PaymentKind] = mapped_column(String(8), comment="charge or refund.")
    purpose: Mapped[PaymentPurpose] = mapped_column(String(20), comment="What the money is for.")
    amount_cents: Mapped[int] = mapped_column(Integer, comment="Always positive; `kind` gives the direction.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When the money moved.")


class ApprovalRequest(Base):
    """A change to a large corporate booking, held for a manager's decision (policy rule 9)."""

    __tablename__ = "approval_requests"
    __table_args__ = (
        one_of("change_type", ChangeType),
        one_of("status", ApprovalStatus),
        CheckConstraint(
            "(change_type = 'change_dates' AND new_check_in IS NOT NULL AND new_check_out > new_check_in"
            " AND new_room_type_id IS NULL)"
            " OR (change_type = 'change_room_type' AND new_room_type_id IS NOT NULL"
            " AND new_check_in IS NULL AND new_check_out IS NULL)"
            " OR (change_type = 'cancel' AND new_room_type_id IS NULL"
            " AND new_check_in IS NULL AND new_check_out IS NULL)",
            name="details_match_change_type",
        ),
    )

    approval_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "APR-0003"')
    booking_id: Mapped[str] = mapped_column(ForeignKey("bookings.booking_id"))
    requested_by_guest_id: Mapped[str] = mapped_column(
        ForeignKey("guests.guest_id"), comment="The verified person who asked for the change."
    )
    change_type: Mapped[ChangeType] = mapped_column(
        String(20), comment="change_dates, change_room_type or cancel."
    )
    new_check_in: Mapped[date | None] = mapped_column(Date, comment="Requested arrival (change_dates).")
    new_check_out: Mapped[date | None] = mapped_column(Date, comment="Requested departure (change_dates).")
    new_room_type_id: Mapped[str | None] = mapped_column(
        ForeignKey("room_types.room_type_id"), comment="Requested room type (change_room_type)."
    )
    status: Mapped[ApprovalStatus] = mapped_column(String(10), comment="pending until a manager decides.")
    note: Mapped[str] = mapped_column(String(500), comment="Free-text context for the manager.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When the request was filed.")


class SupportTicket(Entity, Base):
    """A problem a guest reported, tracked until it is resolved."""

    not_found = "Support ticket {key} not found (ticket IDs look like TK-10031)"
    __tablename__ = "support_tickets"
    __table_args__ = (one_of("category", TicketCategory), one_of("status", TicketStatus))

    ticket_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "TK-0031"')
    guest_id: Mapped[str] = mapped_column(ForeignKey("guests.guest_id"), comment="Who reported it.")
    booking_id: Mapped[str | None] = mapped_column(
        ForeignKey("bookings.booking_id"), comment="The stay it is about, if any."
    )
    category: Mapped[TicketCategory] = mapped_column(
        String(12), comment="noise, cleanliness, maintenance, billing, other."
    )
    status: Mapped[TicketStatus] = mapped_column(String(10), comment="open or resolved.")
    summary: Mapped[str] = mapped_column(String(500), comment="The problem in the guest's words.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When it was reported.")


class LoyaltyTransaction(Base):
    """A movement of loyalty points: earned on a stay, awarded as goodwill, or redeemed."""

    __tablename__ = "loyalty_transactions"
    __table_args__ = (
        one_of("kind", LoyaltyTransactionKind),
        CheckConstraint(
            "(kind IN ('stay', 'goodwill') AND points > 0) OR (kind = 'redemption' AND points < 0)",
            name="sign_matches_kind",
        ),
        CheckConstraint("kind <> 'goodwill' OR ticket_id IS NOT NULL", name="goodwill_has_ticket"),
    )

    transaction_id: Mapped[str] = mapped_column(String(10), primary_key=True, comment='e.g. "LT-00012"')
    guest_id: Mapped[str] = mapped_column(ForeignKey("guests.guest_id"))
    booking_id: Mapped[str | None] = mapped_column(
        ForeignKey("bookings.booking_id"), default=None, kw_only=True
    )
    ticket_id: Mapped[str | None] = mapped_column(
        ForeignKey("support_tickets.ticket_id"),
        default=None,
        kw_only=True,
        comment="The complaint a goodwill award answers.",
    )
    kind: Mapped[LoyaltyTransactionKind] = mapped_column(String(10), comment="stay, goodwill or redemption.")
    points: Mapped[int] = mapped_column(Integer, comment="Signed: positive earned, negative redeemed.")
    created_at: Mapped[datetime] = mapped_column(DateTime, comment="When the points moved.")


class IdentityVerification(IdentityVerificationRecord, Base):
    """A successful identity check in the current conversation; write tools require one (policy rule 1).

    The table is per-conversation bookkeeping, excluded from the state comparison as a whole.
    """

    guest_id: Mapped[str] = mapped_column(
        ForeignKey("guests.guest_id"), comment="Whose identity was checked."
    )
