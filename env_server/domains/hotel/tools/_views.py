"""What the hotel tools return: pydantic views of the tables, shaped for the agent to read.

Views never expose what the agent must obtain from the guest (a guest's date of birth stays private).
Enumerated fields take the models' `Literal` aliases, so a view names its values once, where the column does;
the nested lists (a guest's cards, a booking's extras, payments and approval requests, a hotel's room types)
are the models' view-only relationships.
"""

from __future__ import annotations

from datetime import date

from pydantic import Field
from sqlalchemy import func, select

from env_server.domain import RowView, ToolContext
from env_server.domains.hotel.models import (
    ApprovalStatus,
    Booking,
    BookingStatus,
    ChangeType,
    CorporateAccount,
    CorporateRole,
    ExtraKind,
    Guest,
    Hotel,
    HotelTier,
    LoyaltyTier,
    LoyaltyTransaction,
    PaymentKind,
    PaymentMethod,
    PaymentMethodKind,
    PaymentPurpose,
    RatePlan,
    RoomType,
    TicketCategory,
    TicketStatus,
)


class PaymentMethodView(RowView):
    """A card or invoice arrangement that bookings can be charged to."""

    payment_method_id: str
    kind: PaymentMethodKind
    label: str


class GuestView(RowView):
    """A guest profile with loyalty status and payment methods."""

    guest_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    loyalty_tier: LoyaltyTier
    loyalty_points: int
    corporate_account_id: str | None
    corporate_role: CorporateRole | None
    payment_methods: list[PaymentMethodView]


class BookingSummary(RowView):
    """One line of a guest's booking list."""

    booking_id: str
    status: BookingStatus
    hotel_name: str
    room_type_name: str
    check_in: date
    check_out: date
    room_total_cents: int
    corporate_account_id: str | None


class ExtraView(RowView):
    """An add-on billed at check-out."""

    extra: ExtraKind
    price_cents: int
    complimentary: bool


class PaymentView(RowView):
    """A charge or refund recorded for a booking."""

    payment_id: str
    kind: PaymentKind
    purpose: PaymentPurpose
    amount_cents: int
    payment_method_id: str


class ApprovalView(RowView):
    """A change waiting for (or refused by) a manager."""

    approval_id: str
    booking_id: str
    change_type: ChangeType
    status: ApprovalStatus
    requested_by_guest_id: str
    new_check_in: date | None
    new_check_out: date | None
    new_room_type_id: str | None


class BookingView(RowView):
    """A booking with its hotel, room, money and pending requests."""

    booking_id: str
    status: BookingStatus
    guest_id: str
    guest_name: str
    hotel_id: str
    hotel_name: str
    hotel_tier: HotelTier
    room_type_id: str
    room_type_name: str
    check_in: date
    check_out: date
    nights: int
    adults: int
    rate_plan: RatePlan
    room_total_cents: int
    corporate_account_id: str | None
    payment_method_id: str
    extras: list[ExtraView]
    payments: list[PaymentView]
    approval_requests: list[ApprovalView]
    goodwill_points_awarded: int = Field(description="Goodwill points already given for this stay")


class RoomTypeView(RowView):
    """A room category of a hotel."""

    room_type_id: str
    name: str
    max_occupancy: int


class HotelView(RowView):
    """A hotel and its room categories."""

    hotel_id: str
    name: str
    city: str
    tier: HotelTier
    room_types: list[RoomTypeView]


class RoomOffer(RowView):
    """The price and availability of one room type for a requested stay."""

    room_type_id: str
    name: str
    max_occupancy: int
    rooms_available: int = Field(description="Rooms free on every night of the stay (0 = sold out)")
    nightly_rates_cents: list[int] = Field(description="Public rate of each night")
    total_cents: int = Field(description="Room total for the stay with the plan or corporate discount")


class ChangeQuote(RowView):
    """What a booking would cost after a change of dates or room type (change fees not included)."""

    booking_id: str
    room_type_id: str
    check_in: date
    check_out: date
    current_total_cents: int
    new_total_cents: int
    difference_cents: int = Field(
        description="Positive: the guest pays more; negative: the guest gets money back"
    )


class MemberView(RowView):
    """A person linked to a corporate account."""

    guest_id: str
    name: str
    corporate_role: str


class CorporateAccountView(RowView):
    """A corporate account, its negotiated discount and its people."""

    account_id: str
    company_name: str
    discount_pct: int
    invoice_payment_method_id: str | None
    members: list[MemberView]


class TicketView(RowView):
    """A reported problem."""

    ticket_id: str
    guest_id: str
    booking_id: str | None
    category: TicketCategory
    status: TicketStatus
    summary: str


class VerificationView(RowView):
    """The outcome of a successful identity check."""

    guest_id: str
    name: str
    verified: bool


class LoyaltyAwardView(RowView):
    """Points credited to a guest."""

    transaction_id: str
    guest_id: str
    points: int
    new_balance: int


def guest_view(ctx: ToolContext, guest: Guest) -> GuestView:
    """The profile of `guest`, with the cards it owns (its `payment_methods` relationship)."""
    return GuestView.of(guest)


def booking_summary(ctx: ToolContext, booking: Booking) -> BookingSummary:
    """One list line for `booking`."""
    room_type = ctx.session.get_one(RoomType, booking.room_type_id)
    hotel = ctx.session.get_one(Hotel, room_type.hotel_id)
    return BookingSummary.of(booking, hotel_name=hotel.name, room_type_name=room_type.name)


def booking_view(ctx: ToolContext, booking: Booking) -> BookingView:
    """Everything about `booking` an agent needs to apply the policy.

    Its extras, payments and approval requests are the booking's view-only relationships.
    """
    room_type = ctx.session.get_one(RoomType, booking.room_type_id)
    hotel = ctx.session.get_one(Hotel, room_type.hotel_id)
    guest = ctx.session.get_one(Guest, booking.guest_id)
    goodwill = ctx.session.scalar(
        select(func.coalesce(func.sum(LoyaltyTransaction.points), 0)).where(
            LoyaltyTransaction.booking_id == booking.booking_id, LoyaltyTransaction.kind == "goodwill"
        )
    )
    return BookingView.of(
        booking,
        guest_name=f"{guest.first_name} {guest.last_name}",
        hotel_id=hotel.hotel_id,
        hotel_name=hotel.name,
        hotel_tier=hotel.tier,
        room_type_name=room_type.name,
        nights=(booking.check_out - booking.check_in).days,
        goodwill_points_awarded=goodwill or 0,
    )


def hotel_view(ctx: ToolContext, hotel: Hotel) -> HotelView:
    """`hotel` with its room categories (its `room_types` relationship)."""
    return HotelView.of(hotel)


def account_view(ctx: ToolContext, account: CorporateAccount) -> CorporateAccountView:
    """`account` with its invoice payment method and linked people."""
    invoice = ctx.session.scalar(
        select(PaymentMethod.payment_method_id).where(
            PaymentMethod.corporate_account_id == account.account_id
        )
    )
    members = ctx.session.scalars(
        select(Guest).where(Guest.corporate_account_id == account.account_id).order_by(Guest.guest_id)
    )
    return CorporateAccountView.of(
        account,
        invoice_payment_method_id=invoice,
        members=[
            MemberView.of(m, name=f"{m.first_name} {m.last_name}", corporate_role=m.corporate_role or "")
            for m in members
        ],
    )
