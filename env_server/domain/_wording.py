"""How people say money and dates in a user's lines and a task's `communicate` items.

One name per form, so every domain words an amount or a date the same way. The `communicate` check matches
tokens after normalising currency and numbers, so "$150" also matches an agent that writes "$150.00".
"""

from __future__ import annotations

from datetime import date


def dollars(cents: int) -> str:
    """An amount as people write it: "$1,450" for whole dollars, "$292.50" otherwise."""
    whole, part = divmod(cents, 100)
    return f"${whole:,}" if part == 0 else f"${whole:,}.{part:02d}"


def dollars_and_cents(cents: int) -> str:
    """An amount with its cents always written: "$44.90", "$1,899.00"."""
    return f"${cents // 100:,}.{cents % 100:02d}"


def whole_dollars(cents: int) -> str:
    """A round amount in whole dollars (cents dropped): "$1,000"."""
    return f"${cents // 100:,}"


def day_month(value: date) -> str:
    """A date within the year, day first: "14 October"."""
    return f"{value.day} {value:%B}"


def day_month_year(value: date) -> str:
    """A full date, day first: "14 May 1988"."""
    return f"{value.day} {value:%B %Y}"


def month_day(value: date) -> str:
    """A date within the year, month first: "October 14"."""
    return f"{value:%B} {value.day}"


def month_day_year(value: date) -> str:
    """A full date, month first: "May 14, 1988"."""
    return f"{value:%B} {value.day}, {value.year}"
