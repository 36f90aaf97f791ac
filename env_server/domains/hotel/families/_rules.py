"""The rules of `policy.md` as functions, so every family derives its gold actions the same way.

Only the agent's decisions live here (refund percentage, change fee, complimentary extras, goodwill points,
the approval threshold); prices come from `pricing.py`, the arithmetic the booking system itself applies.
"""

from __future__ import annotations

from datetime import date
from typing import get_args

from env_server.domains.hotel.models import NOW, ExtraKind, HotelTier, LoyaltyTier, RatePlan, TicketCategory

TODAY = NOW.date()

#: Rule 5: days of notice for a 100% refund (and, rule 8, below which the change fee applies).
FULL_REFUND_NOTICE = {"budget": 1, "standard": 2, "premium": 3, "luxury": 7}
#: Rule 9: corporate bookings whose room total is at least this need manager approval to change.
APPROVAL_THRESHOLD_CENTS = 100_000
#: Rule 12: goodwill points per ticket category (billing and other earn none); platinum doubles.
GOODWILL_POINTS = {"noise": 1_000, "cleanliness": 1_000, "maintenance": 2_500, "billing": 0, "other": 0}
#: Rule 12: the oldest check-out date that still earns goodwill points.
GOODWILL_WINDOW_START = date(2026, 9, 1)
HOTEL_TIERS: tuple[HotelTier, ...] = get_args(HotelTier)
LOYALTY_TIERS: tuple[LoyaltyTier, ...] = get_args(LoyaltyTier)
LOYALTY_POINTS = {"blue": (0, 4_000), "silver": (4_000, 15_000), "gold": (15_000, 40_000)}


def days_before(check_in: date) -> int:
    """Rule 4: the check-in date minus today."""
    return (check_in - TODAY).days


def tier_refund_percent(hotel_tier: HotelTier, days: int) -> int:
    """Rule 5: the flexible-rate refund share by hotel tier and days before check-in."""
    if days >= FULL_REFUND_NOTICE[hotel_tier]:
        return 100
    half_from = {"budget": None, "standard": 0, "premium": 1, "luxury": 2}[hotel_tier]
    return 50 if half_from is not None and days >= half_from else 0


def refund_percent(hotel_tier: HotelTier, days: int, loyalty_tier: LoyaltyTier, rate_plan: RatePlan) -> int:
    """Rules 5 to 7: the refund of a cancellation, for the loyalty tier of the guest who stays."""
    if rate_plan == "non_refundable":
        return 0
    percent = tier_refund_percent(hotel_tier, days)
    if loyalty_tier == "platinum" or (loyalty_tier == "gold" and percent == 50):
        return 100
    return percent


def change_fee_applies(hotel_tier: HotelTier, days: int, loyalty_tier: LoyaltyTier) -> bool:
    """Rule 8: the $50 fee inside the full-refund window, waived for gold and platinum members."""
    return days < FULL_REFUND_NOTICE[hotel_tier] and loyalty_tier not in ("gold", "platinum")


def extra_is_complimentary(extra: ExtraKind, loyalty_tier: LoyaltyTier) -> bool:
    """Rule 11: late check-out free from gold up, breakfast free for platinum, parking never free."""
    if extra == "late_checkout":
        return loyalty_tier in ("gold", "platinum")
    return extra == "breakfast" and loyalty_tier == "platinum"


def goodwill_points(category: TicketCategory, loyalty_tier: LoyaltyTier) -> int:
    """Rule 12: the goodwill award for a ticket category (before the window and once-per-stay checks)."""
    return GOODWILL_POINTS[category] * (2 if loyalty_tier == "platinum" else 1)
