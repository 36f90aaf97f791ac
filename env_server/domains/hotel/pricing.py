"""Stay arithmetic shared by the seed and the tools: a stay's nights, and what a stay and an extra cost.

Only mechanics the booking system itself applies live here. Policy decisions (refund percentages, fee
waivers, approvals) are the agent's, written in `policy.md` and passed to the write tools as arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

#: Discount of the non-refundable rate plan on the public nightly rates, %.
NON_REFUNDABLE_DISCOUNT_PCT = 10
#: The fee for changing dates or room type inside the hotel's free-cancellation window.
CHANGE_FEE_CENTS = 5_000
#: Extras, billed at check-out: breakfast per adult per night, parking per night, late check-out once.
BREAKFAST_CENTS = 2_500
PARKING_CENTS = 2_000
LATE_CHECKOUT_CENTS = 4_000


def stay_nights(check_in: date, check_out: date) -> list[date]:
    """The nights of a stay: every date from check-in up to the day before check-out."""
    return [check_in + timedelta(days=i) for i in range((check_out - check_in).days)]


def stay_price_cents(nightly_rates: Sequence[int], *, rate_plan: str, discount_pct: int) -> int:
    """The room total of a stay: the nightly rates summed, less the plan or corporate discount, rounded down.

    Args:
        nightly_rates: the public rate of each night, in cents.
        rate_plan: "flexible" or "non_refundable".
        discount_pct: the corporate account's negotiated discount, or 0 for a private booking.
    """
    pct = discount_pct or (NON_REFUNDABLE_DISCOUNT_PCT if rate_plan == "non_refundable" else 0)
    return sum(nightly_rates) * (100 - pct) // 100


def extra_price_cents(extra: str, *, adults: int, nights: int) -> int:
    """The list price of an extra for a booking.

    Args:
        extra: "breakfast", "parking" or "late_checkout".
        adults: adults on the booking (breakfast is per adult).
        nights: nights of the stay (breakfast and parking are per night).
    """
    if extra == "breakfast":
        return BREAKFAST_CENTS * adults * nights
    if extra == "parking":
        return PARKING_CENTS * nights
    if extra == "late_checkout":
        return LATE_CHECKOUT_CENTS
    raise ValueError(f"unknown extra {extra!r} (known: breakfast, parking, late_checkout)")
