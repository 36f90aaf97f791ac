"""Policy figures and phrasing shared by the travel scenario families.

Prices, bag fees and refund percentages come from the domain itself (`fares.py`, the `fare_classes` rows);
the compensation figures the policy states only in prose (rules 9-11) are named here once, with their rule.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from env_server.domains.travel.models import NOW
from env_server.domains.travel.seed import CONTROLLABLE

Row = dict[str, Any]

TIERS = ("member", "silver", "gold", "platinum")
#: Rules 5 and 9: a delay of this many minutes or more disrupts a flight.
DISRUPTION_DELAY_MINUTES = 180
#: Rule 10: from this delay on, the higher amount is due.
LONG_DELAY_MINUTES = 360
#: Rule 10: compensation per traveller, by disruption.
COMPENSATION_CENTS = {"delay": 10_000, "long_delay": 20_000, "cancelled": 25_000}
#: Rule 10: bonus per traveller by the holder's loyalty tier (none without an account).
COMPENSATION_TIER_BONUS_CENTS = {"member": 0, "silver": 2_500, "gold": 5_000, "platinum": 10_000}
#: Rule 11: a compensation above this goes to a supervisor instead.
COMPENSATION_LIMIT_CENTS = 50_000
#: Rule 7: the notice thresholds of the refund table, and the 24-hour booking window.
WEEK = timedelta(days=7)
DAY = timedelta(hours=24)
#: The user's last line after the yes: the agent's report of what it did still gets an answer.
THANKS = "Thank you, that's all I needed."


def when(flight: Row) -> datetime:
    """A flight's scheduled departure."""
    return datetime.fromisoformat(flight["departure_at"])


def iso(value: datetime) -> str:
    """A datetime as the patch writes it."""
    return value.isoformat(timespec="seconds")


def compensation_due(flight: Row, travellers: int, tier: str | None) -> int:
    """Rules 9-10: the voucher a reservation gets for a flight, 0 when the flight is not eligible."""
    if flight["disruption_cause"] not in CONTROLLABLE:
        return 0
    if flight["status"] == "cancelled":
        base = COMPENSATION_CENTS["cancelled"]
    elif flight["status"] == "landed" and flight["delay_minutes"] >= DISRUPTION_DELAY_MINUTES:
        base = COMPENSATION_CENTS["long_delay" if flight["delay_minutes"] >= LONG_DELAY_MINUTES else "delay"]
    else:
        return 0
    return (base + COMPENSATION_TIER_BONUS_CENTS.get(tier or "member", 0)) * travellers


def refund_percent(fare: Row, booked_at: datetime, first_departure: datetime, airline_cancelled: bool) -> int:
    """Rule 7: the share of the ticket value refunded on cancelling now, from the fare class's own row."""
    notice = first_departure - NOW
    if airline_cancelled or (NOW - booked_at < DAY and notice >= WEEK):
        return 100
    if notice >= WEEK:
        return int(fare["refund_pct_week_plus"])
    return int(fare["refund_pct_day_plus"] if notice >= DAY else fare["refund_pct_last_day"])
