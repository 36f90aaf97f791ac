"""Identity and customer profile tools: who the caller is, and what they hold."""

from __future__ import annotations

from datetime import date

from sqlalchemy import Row, func, insert, select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.travel.models import (
    IdentityVerification,
    LoyaltyAccount,
    Passenger,
    PaymentMethod,
    Reservation,
)
from env_server.domains.travel.tools._common import _get_passenger
from env_server.domains.travel.tools._views import PassengerProfile, payment_method_view

# A profile is read on every verification, the most frequent call of the domain: its reads are plain
# column selects returning rows (no ORM objects, no identity map), the views read the rows by name.
_PASSENGER = select(
    Passenger.passenger_id,
    Passenger.first_name,
    Passenger.last_name,
    Passenger.email,
    Passenger.phone,
    Passenger.date_of_birth,
)
_LOYALTY = select(
    LoyaltyAccount.loyalty_id, LoyaltyAccount.tier, LoyaltyAccount.miles_balance, LoyaltyAccount.enrolled_on
)
_METHODS = select(
    PaymentMethod.payment_method_id,
    PaymentMethod.kind,
    PaymentMethod.card_brand,
    PaymentMethod.card_last4,
    PaymentMethod.balance_cents,
    PaymentMethod.expires_on,
).order_by(PaymentMethod.payment_method_id)
_HELD = select(Reservation.reservation_id).order_by(Reservation.reservation_id)


def _profile(ctx: ToolContext, passenger: Passenger | Row) -> PassengerProfile:
    pid = passenger.passenger_id
    account = ctx.session.execute(_LOYALTY.where(LoyaltyAccount.passenger_id == pid)).one_or_none()
    methods = ctx.session.execute(_METHODS.where(PaymentMethod.passenger_id == pid))
    reservations = ctx.session.scalars(_HELD.where(Reservation.holder_id == pid))
    return PassengerProfile.of(
        passenger,
        loyalty=account,
        payment_methods=[payment_method_view(m) for m in methods],
        reservation_ids=list(reservations),
    )


@tool(kind="write")
def verify_passenger_identity(
    ctx: ToolContext, email: str, last_name: str, date_of_birth: date
) -> PassengerProfile:
    """Verify the caller's identity against their passenger profile and record the check.

    Call this before any change: every write tool except flight alerts refuses to act on a reservation
    whose holder has not been verified in this conversation. Use the details the caller gives you; never
    fill them in from a reservation or profile you looked up.

    Args:
        email: the email address on the caller's profile, e.g. "amelia.walsh@example.com".
        last_name: the caller's last name, e.g. "Walsh".
        date_of_birth: the caller's date of birth, e.g. "1984-03-09".

    Returns:
        The verified passenger's profile: loyalty account, payment methods and reservations held.
    """
    passenger = ctx.session.execute(
        _PASSENGER.where(func.lower(Passenger.email) == email.strip().lower())
    ).one_or_none()
    if (
        passenger is None
        or passenger.last_name.lower() != last_name.strip().lower()
        or passenger.date_of_birth != date_of_birth
    ):
        raise ToolError("The details do not match any passenger profile; identity not verified")
    ctx.session.execute(
        insert(IdentityVerification).values(
            verification_id=ctx.new_id("IV"), passenger_id=passenger.passenger_id, verified_at=ctx.now
        )
    )
    return _profile(ctx, passenger)


@tool(kind="read")
def get_passenger_profile(ctx: ToolContext, passenger_id: str) -> PassengerProfile:
    """Look up a passenger profile: name, contact, loyalty tier, payment methods and reservations held.

    Args:
        passenger_id: the passenger's ID, e.g. "PX-10042".
    """
    return _profile(ctx, _get_passenger(ctx, passenger_id))
