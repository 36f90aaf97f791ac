"""The policy figures and rules the retail families compute gold actions from.

Figures the catalogue already defines (tiers, return fee, shipping) are imported from it; the ones
`policy.md` states only in prose are named here once, with their rule number.
"""

from __future__ import annotations

from datetime import date

from env_server.domains.retail.catalog import NOW, TIERS
from env_server.domains.retail.factories import TierSpec

TODAY = NOW.date()
#: Tier code -> benefits (return window, fee waiver, warranty extension, price protection).
TIER: dict[str, TierSpec] = {t.code: t for t in TIERS}
TIER_CODES = tuple(TIER)
#: Rule 8: a refund (or a return's refund) above this needs supervisor approval.
APPROVAL_LIMIT_CENTS = 100_000
#: Rule 9: delay compensation needs a total of at least this, and a delay of at least this many days.
DELAY_MIN_TOTAL_CENTS = 15_000
DELAY_MIN_DAYS = 3
#: Rule 9: the credit is this share of the order total (rounded down), capped.
DELAY_PERCENT = 10
DELAY_CAP_CENTS = 5_000
#: Rule 10: price protection lasts this many days after delivery.
PRICE_PROTECTION_DAYS = 14
#: Rule 15: a promo code can be added up to this many days after the order was placed.
PROMO_MAX_AGE_DAYS = 7


def fee_waived(tier: str, reason: str) -> bool:
    """Rule 6: only changed-mind returns carry the fee, and Gold and Platinum never pay it."""
    return reason != "changed_mind" or TIER[tier].return_fee_waived


def delay_credit(total_cents: int) -> int:
    """Rule 9: 10% of the order total, rounded down to the cent, at most $50.00."""
    return min(total_cents * DELAY_PERCENT // 100, DELAY_CAP_CENTS)


def days_since(value: date) -> int:
    """Calendar days from `value` to today (the day after is day 1)."""
    return (TODAY - value).days
