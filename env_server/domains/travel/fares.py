"""Rules the airline's systems apply, shared by the seed and the tools: fares, miles, bags, alert contacts.

Tools use these for what the booking system computes itself (prices, miles, bag limits). The seed also uses
`TIER_BAG_BONUS` and `baggage_fee_cents` to write a consistent history; no tool computes a bag fee, refund or
compensation for the agent: those are the agent's decisions under the policy.
"""

from __future__ import annotations

#: Extra checked bags allowed in the tier-based allowance, by the holder's loyalty tier (policy rule 12).
TIER_BAG_BONUS = {"member": 0, "silver": 1, "gold": 1, "platinum": 2}

#: Fee for each checked bag beyond the allowance, per bag (policy rule 12).
EXTRA_BAG_FEE_CENTS = 5000

#: Most checked bags one traveller may have on a reservation.
MAX_BAGS_PER_TRAVELER = 4

#: Most travellers on one reservation.
MAX_TRAVELERS = 6

#: Longest first or last name the booking system stores.
MAX_NAME_LENGTH = 40

#: Largest amount any tool accepts ($100,000): a guard against runaway numbers, not a business limit.
MAX_AMOUNT_CENTS = 10_000_000


def alert_contact(channel: str, contact: str) -> str:
    """The canonical form of an alert contact: "+" and digits for SMS, a lower-case address for email."""
    if channel == "sms":
        return "+" + "".join(ch for ch in contact if ch.isdigit())
    return contact.strip().lower()


def fare_price_cents(base_price_cents: int, price_pct: int) -> int:
    """Today's price of one seat in a fare class: the cabin base price scaled by the fare's `price_pct`."""
    return base_price_cents * price_pct // 100


def flight_miles(distance_miles: int, miles_pct: int) -> int:
    """Miles one traveller earns on a flight: its distance scaled by the fare's `miles_pct`, rounded down."""
    return distance_miles * miles_pct // 100


def baggage_fee_cents(already_checked: int, adding: int, allowance: int) -> int:
    """The fee for `adding` bags to a traveller who has `already_checked` bags and a free `allowance`."""
    paid_before = max(0, already_checked - allowance)
    paid_after = max(0, already_checked + adding - allowance)
    return (paid_after - paid_before) * EXTRA_BAG_FEE_CENTS
