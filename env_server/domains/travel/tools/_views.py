"""What the travel tools return: pydantic views of the rows, shaped for the agent to read."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, Field

from env_server.domains.travel.models import (
    Baggage,
    Compensation,
    FareClass,
    Flight,
    FlightAlert,
    LoyaltyAccount,
    MileageTransaction,
    Payment,
    PaymentMethod,
    SupervisorReview,
    Traveler,
)


class FlightView(BaseModel):
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

    @classmethod
    def of(cls, flight: Flight) -> FlightView:
        """The view of a flight row."""
        return cls(
            flight_id=flight.flight_id,
            flight_number=flight.flight_number,
            origin=flight.origin,
            destination=flight.destination,
            departure_at=flight.departure_at,
            arrival_at=flight.arrival_at,
            distance_miles=flight.distance_miles,
            status=flight.status,
            delay_minutes=flight.delay_minutes,
            disruption_cause=flight.disruption_cause,
        )


class FareOffer(BaseModel):
    """Today's price of one fare class on one flight."""

    fare_class: str
    cabin: str
    price_cents: int = Field(description="Price per traveller.")
    seats_available: int = Field(description="Unsold seats in the fare's cabin.")


class FlightOption(FlightView):
    """A flight found by a search, with every fare on sale."""

    fares: list[FareOffer]


class FareClassView(BaseModel):
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

    @classmethod
    def of(cls, fare: FareClass) -> FareClassView:
        """The view of a fare class row."""
        return cls.model_validate(fare, from_attributes=True)


class PaymentMethodView(BaseModel):
    """A card or voucher the passenger can pay with."""

    payment_method_id: str
    kind: str = Field(description="credit_card or voucher.")
    label: str = Field(description='e.g. "Visa ending 4242" or "Travel voucher".')
    balance_cents: int | None = Field(description="Remaining value of a voucher; null for cards.")
    expires_on: date | None = Field(description="Last day a voucher can be used.")

    @classmethod
    def of(cls, method: PaymentMethod) -> PaymentMethodView:
        """The view of a payment method row."""
        label = (
            f"{method.card_brand} ending {method.card_last4}"
            if method.kind == "credit_card"
            else "Travel voucher"
        )
        return cls(
            payment_method_id=method.payment_method_id,
            kind=method.kind,
            label=label,
            balance_cents=method.balance_cents,
            expires_on=method.expires_on,
        )


class LoyaltyView(BaseModel):
    """A loyalty account's standing."""

    loyalty_id: str
    tier: str = Field(description="member, silver, gold or platinum.")
    miles_balance: int
    enrolled_on: date

    @classmethod
    def of(cls, account: LoyaltyAccount) -> LoyaltyView:
        """The view of a loyalty account row."""
        return cls.model_validate(account, from_attributes=True)


class PassengerProfile(BaseModel):
    """A customer profile with what they own."""

    passenger_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    loyalty: LoyaltyView | None = Field(description="Null when the passenger is not a member.")
    payment_methods: list[PaymentMethodView]
    reservation_ids: list[str] = Field(description="Reservations this passenger holds (booked).")


class MileageView(BaseModel):
    """One movement of miles."""

    transaction_id: str
    kind: str
    miles: int
    flight_id: str | None
    reservation_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, txn: MileageTransaction) -> MileageView:
        """The view of a mileage transaction row."""
        return cls.model_validate(txn, from_attributes=True)


class LoyaltyDetails(LoyaltyView):
    """A loyalty account with its mileage history, newest first."""

    passenger_id: str
    transactions: list[MileageView]


class TravelerView(BaseModel):
    """A person flying on a reservation."""

    traveler_id: str
    first_name: str
    last_name: str
    date_of_birth: date
    passenger_id: str | None = Field(description="Set when the traveller is the holder.")

    @classmethod
    def of(cls, traveler: Traveler) -> TravelerView:
        """The view of a traveller row."""
        return cls.model_validate(traveler, from_attributes=True)


class SegmentView(BaseModel):
    """One flight of a reservation."""

    seq: int = Field(description="1 = outbound, 2 = return.")
    cabin: str
    fare_cents: int = Field(description="Ticket value of this flight per traveller (the refund base).")
    flight: FlightView


class BaggageView(BaseModel):
    """Checked bags added for one traveller."""

    bag_id: str
    traveler_id: str
    quantity: int
    fee_cents: int

    @classmethod
    def of(cls, bag: Baggage) -> BaggageView:
        """The view of a baggage row."""
        return cls.model_validate(bag, from_attributes=True)


class PaymentView(BaseModel):
    """A charge or refund on a reservation."""

    payment_id: str
    payment_method_id: str
    direction: str
    purpose: str
    amount_cents: int
    created_at: datetime

    @classmethod
    def of(cls, payment: Payment) -> PaymentView:
        """The view of a payment row."""
        return cls.model_validate(payment, from_attributes=True)


class CompensationView(BaseModel):
    """A compensation voucher issued for a disrupted flight."""

    compensation_id: str
    reservation_id: str
    flight_id: str
    amount_cents: int
    voucher_id: str

    @classmethod
    def of(cls, compensation: Compensation) -> CompensationView:
        """The view of a compensation row."""
        return cls.model_validate(compensation, from_attributes=True)


class ReviewView(BaseModel):
    """A request held for a supervisor."""

    review_id: str
    reservation_id: str
    category: str
    amount_cents: int
    status: str
    summary: str

    @classmethod
    def of(cls, review: SupervisorReview) -> ReviewView:
        """The view of a supervisor review row."""
        return cls.model_validate(review, from_attributes=True)


class ReservationView(BaseModel):
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


class FlightAlertView(BaseModel):
    """A flight status subscription."""

    alert_id: str
    flight_id: str
    channel: str
    contact: str

    @classmethod
    def of(cls, alert: FlightAlert) -> FlightAlertView:
        """The view of a flight alert row."""
        return cls.model_validate(alert, from_attributes=True)
