"""What the travel tools return: pydantic views of the rows, shaped for the agent to read."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import Field
from sqlalchemy import Row, select

from env_server.domain import RowView, ToolContext
from env_server.domains.travel.models import (
    Baggage,
    Compensation,
    Payment,
    PaymentMethod,
    Reservation,
    SupervisorReview,
)
from env_server.domains.travel.tools._common import _get_flight, _segments, _travelers


class FlightView(RowView):
    """One departure of a flight and its operational status."""

    flight_id: str
    flight_number: str
    origin: str
    destination: str
    departure_at: datetime = Field(description="Scheduled departure, UTC.")
    arrival_at: datetime = Field(description="Scheduled arrival, UTC.")
    distance_miles: int
    status: str = Field(description="scheduled, delayed, cancelled, departed or landed.")
    delay_minutes: int = Field(description="Arrival delay: actual once landed, expected before.")
    disruption_cause: str | None = Field(description="Why it is delayed or cancelled.")


class FareOffer(RowView):
    """Today's price of one fare class on one flight."""

    fare_class: str
    cabin: str
    price_cents: int = Field(description="Price per traveller.")
    seats_available: int = Field(description="Unsold seats in the fare's cabin.")


class FlightOption(FlightView):
    """A flight found by a search, with every fare on sale."""

    fares: list[FareOffer]


class FareClassView(RowView):
    """The rules of one fare class, as stored in the fare table."""

    code: str
    name: str
    cabin: str
    price_pct: int = Field(description="Price as a percentage of the cabin base price.")
    changeable: bool
    change_fee_cents: int = Field(description="Per traveller per changed flight.")
    free_bags: int = Field(description="Free checked bags per traveller, before the loyalty bonus.")
    miles_pct: int = Field(description="Miles earned as a percentage of the flight's distance.")
    refund_pct_week_plus: int = Field(description="Refund % when cancelled 7 days or more before departure.")
    refund_pct_day_plus: int = Field(description="Refund % when cancelled 24 h to under 7 days before.")
    refund_pct_last_day: int = Field(description="Refund % when cancelled under 24 h before departure.")


class PaymentMethodView(RowView):
    """A card or voucher the passenger can pay with."""

    payment_method_id: str
    kind: str = Field(description="credit_card or voucher.")
    label: str = Field(description='e.g. "Visa ending 4242" or "Travel voucher".')
    balance_cents: int | None = Field(description="Remaining value of a voucher; null for cards.")
    expires_on: date | None = Field(description="Last day a voucher can be used.")


class LoyaltyView(RowView):
    """A loyalty account's standing."""

    loyalty_id: str
    tier: str = Field(description="member, silver, gold or platinum.")
    miles_balance: int
    enrolled_on: date


class PassengerProfile(RowView):
    """A customer profile with what they own."""

    passenger_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    loyalty: LoyaltyView | None = Field(description="Null when the passenger is not a member.")
    payment_methods: list[PaymentMethodView]
    reservation_ids: list[str] = Field(description="Reservations this passenger holds (booked).")


class MileageView(RowView):
    """One movement of miles."""

    transaction_id: str
    kind: str
    miles: int
    flight_id: str | None
    reservation_id: str | None
    created_at: datetime


class LoyaltyDetails(LoyaltyView):
    """A loyalty account with its mileage history, newest first."""

    passenger_id: str
    transactions: list[MileageView]


class TravelerView(RowView):
    """A person flying on a reservation."""

    traveler_id: str
    first_name: str
    last_name: str
    date_of_birth: date
    passenger_id: str | None = Field(description="Set when the traveller is the holder.")


class SegmentView(RowView):
    """One flight of a reservation."""

    seq: int = Field(description="1 = outbound, 2 = return.")
    cabin: str
    fare_cents: int = Field(description="Ticket value of this flight per traveller (the refund base).")
    flight: FlightView


class BaggageView(RowView):
    """Checked bags added for one traveller."""

    bag_id: str
    traveler_id: str
    quantity: int
    fee_cents: int


class PaymentView(RowView):
    """A charge or refund on a reservation."""

    payment_id: str
    payment_method_id: str
    direction: str
    purpose: str
    amount_cents: int
    created_at: datetime


class CompensationView(RowView):
    """A compensation voucher issued for a disrupted flight."""

    compensation_id: str
    reservation_id: str
    flight_id: str
    amount_cents: int
    voucher_id: str


class ReviewView(RowView):
    """A request held for a supervisor."""

    review_id: str
    reservation_id: str
    category: str
    amount_cents: int
    status: str
    summary: str


class ReservationView(RowView):
    """A reservation with its travellers, flights, bags, money and open reviews."""

    reservation_id: str
    holder_id: str
    fare_class: str
    trip_type: str
    status: str
    booked_at: datetime
    cancelled_at: datetime | None
    ticket_value_cents: int = Field(description="Sum of segment fares times travellers (the refund base).")
    travelers: list[TravelerView]
    segments: list[SegmentView]
    baggage: list[BaggageView]
    payments: list[PaymentView]
    compensations: list[CompensationView]
    supervisor_reviews: list[ReviewView]


class FlightAlertView(RowView):
    """A flight status subscription."""

    alert_id: str
    flight_id: str
    channel: str
    contact: str


def payment_method_view(method: PaymentMethod | Row) -> PaymentMethodView:
    """A card as its brand and last digits, a voucher with its balance."""
    label = (
        f"{method.card_brand} ending {method.card_last4}"
        if method.kind == "credit_card"
        else "Travel voucher"
    )
    return PaymentMethodView.of(method, label=label)


def reservation_view(ctx: ToolContext, reservation: Reservation) -> ReservationView:
    """Everything about `reservation` an agent needs: travellers, flights, bags, money and reviews."""
    rid = reservation.reservation_id
    ctx.session.flush()
    travelers = _travelers(ctx, rid)
    segments = _segments(ctx, rid)
    bags = ctx.session.scalars(select(Baggage).where(Baggage.reservation_id == rid).order_by(Baggage.bag_id))
    payments = ctx.session.scalars(
        select(Payment).where(Payment.reservation_id == rid).order_by(Payment.payment_id)
    )
    compensations = ctx.session.scalars(
        select(Compensation).where(Compensation.reservation_id == rid).order_by(Compensation.compensation_id)
    )
    reviews = ctx.session.scalars(
        select(SupervisorReview)
        .where(SupervisorReview.reservation_id == rid)
        .order_by(SupervisorReview.review_id)
    )
    return ReservationView.of(
        reservation,
        ticket_value_cents=sum(s.fare_cents for s in segments) * len(travelers),
        travelers=travelers,
        segments=[SegmentView.of(s, flight=_get_flight(ctx, s.flight_id)) for s in segments],
        baggage=list(bags),
        payments=list(payments),
        compensations=list(compensations),
        supervisor_reviews=list(reviews),
    )
