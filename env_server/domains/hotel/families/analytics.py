"""Analytics families: read-only questions from staff, answered by a parameterised gold SELECT.

`guest_history` adds a fresh guest with a few bookings and payments and asks about them, so every draw has
its own answer; `seed_slice` asks about a slice of the seeded business (a city, a night, a month, a tier).
The SQL is portable: ISO date literals, CASE, COUNT and SUM, integer cents divided by 100.0.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from env_server.domain import ScenarioContext, ScenarioUnavailable, analytics_task, day_month_year
from env_server.domains.hotel.factories import payment
from env_server.domains.hotel.families._base import (
    TODAY,
    Scene,
    booking,
    new_card,
    new_guest,
    pick_hotel,
    stay,
)
from env_server.domains.hotel.families._rules import (
    HOTEL_TIERS,
    LOYALTY_TIERS,
)
from env_server.domains.hotel.models import Booking, BookingStatus, Hotel, Payment
from env_server.domains.hotel.seed import INVENTORY_FIRST_NIGHT, INVENTORY_LAST_NIGHT
from shared.tasks import Task

HOTEL_JOIN = "JOIN room_types r ON r.room_type_id = b.room_type_id JOIN hotels h ON h.hotel_id = r.hotel_id"
ANALYSTS = (
    "Nadia Rahman, loyalty programme analyst; precise",
    "Martin Kühn, revenue manager; numbers-driven",
    "Lena Vogt, front-office lead; brisk",
    "Samuel Osei, guest-relations manager; thoughtful",
    "Kenji Mori, cluster revenue manager; terse",
)
MONTHS = {7: "July", 8: "August", 9: "September", 10: "October"}


def _task(ctx: ScenarioContext, question: str, shape: str, sql: str, tags: list[str], **fields: Any) -> Task:
    return analytics_task(
        ctx,
        persona=ctx.rng.choice(ANALYSTS),
        description=question,
        script=[question, shape],
        sql=sql,
        tags=tags,
        instructions="You are staff asking a read-only question; accept an answer in the shape you "
        "asked for.",
        **fields,
    )


def guest_history(ctx: ScenarioContext) -> Task:
    """A fresh guest's booking history and one question about it.

    The history mixes stays, no-shows, cancellations (some refunded) and upcoming bookings; the question asks
    for bookings per status, the net amount paid, bookings per city, or the refund of each booking.
    """
    rng = ctx.rng
    guest = new_guest(ctx)
    card = new_card(ctx, guest)
    bookings: list[Booking] = []
    payments: list[Payment] = []
    hotels = [pick_hotel(ctx) for _ in range(rng.randint(1, 3))]
    fresh = [row for h in hotels for row in h.fresh]
    for _ in range(rng.randint(3, 6)):
        hotel = rng.choice(hotels)
        statuses: tuple[BookingStatus, ...] = (
            "checked_out",
            "checked_out",
            "cancelled",
            "confirmed",
            "no_show",
        )
        status = rng.choice(statuses)
        start = (
            TODAY + timedelta(days=rng.randint(2, 30))
            if status == "confirmed" or (status == "cancelled" and rng.random() < 0.5)
            else date(2026, 7, 1) + timedelta(days=rng.randint(0, 85))
        )
        bk, pay = booking(
            ctx,
            guest,
            stay(ctx, hotel, rng.choice(hotel.room_types), start, rng.randint(1, 4)),
            card,
            status=status,
        )
        if status == "cancelled":
            cancelled = bk.cancelled_at = datetime.combine(min(start, TODAY) - timedelta(days=1), time(12))
            bk.cancellation_reason = "Plans changed"
            refund = bk.room_total_cents * rng.choice((100, 50, 0)) // 100
            if refund:
                payments.append(
                    payment(ctx.new_id("PAY"), bk, "refund", "cancellation_refund", refund, cancelled)
                )
        bookings.append(bk)
        payments.append(pay)
    gid = guest.id
    patch = Scene(ctx).put(*fresh, guest.row, card, *bookings, *payments).initial_patch()
    refunds = [p for p in payments if p.kind == "refund"]
    kinds = ["status", "net", "city"] + (["refunds"] * 2 if refunds else [])
    kind = rng.choice(kinds)
    if kind == "status":
        question = f"How many bookings does guest {gid} have in each status?"
        shape = "Give each booking status with its count."
        sql = f"SELECT status, COUNT(*) FROM bookings WHERE guest_id = '{gid}' GROUP BY status"
    elif kind == "net":
        question = (
            f"What is the net amount guest {gid} has paid us so far — all charges minus all refunds — "
            "in dollars?"
        )
        shape = "Just the one amount in dollars."
        sql = (
            "SELECT SUM(CASE WHEN p.kind = 'charge' THEN p.amount_cents ELSE -p.amount_cents END) / 100.0 "
            f"FROM payments p JOIN bookings b ON b.booking_id = p.booking_id WHERE b.guest_id = '{gid}'"
        )
    elif kind == "city":
        question = (
            f"In which cities has the guest with email {guest.row.email} booked with us, and how many "
            "bookings in each?"
        )
        shape = "Each city with its number of bookings, whatever their status."
        sql = (
            f"SELECT h.city, COUNT(*) FROM bookings b {HOTEL_JOIN} JOIN guests g ON g.guest_id = b.guest_id "
            f"WHERE g.email = '{guest.row.email}' GROUP BY h.city"
        )
    else:
        question = (
            f"Which of guest {gid}'s bookings got a cancellation refund, and how much was refunded on each?"
        )
        shape = "Each booking ID with its refunded amount in dollars."
        sql = (
            "SELECT b.booking_id, SUM(p.amount_cents) / 100.0 FROM payments p JOIN bookings b "
            f"ON b.booking_id = p.booking_id WHERE b.guest_id = '{gid}' AND p.kind = 'refund' "
            "GROUP BY b.booking_id"
        )
    return _task(ctx, question, shape, sql, ["guest-history", kind], initial_patch=patch)


def _month(m: int) -> tuple[str, str]:
    return f"2026-{m:02d}-01", f"2026-{m + 1:02d}-01"


def seed_slice(ctx: ScenarioContext) -> Task:
    """A question about one slice of the seeded business, with drawn parameters."""
    rng = ctx.rng
    hotels = ctx.entities(Hotel)
    if not hotels:
        raise ScenarioUnavailable("no hotel left to ask about")
    kind = rng.choice(("arrivals", "unsold", "rates", "loyalty", "large", "occupancy"))
    night = INVENTORY_FIRST_NIGHT + timedelta(
        days=rng.randint(0, (INVENTORY_LAST_NIGHT - INVENTORY_FIRST_NIGHT).days)
    )
    spoken = day_month_year(night)
    if kind == "arrivals":
        month = rng.choice(tuple(MONTHS))
        status = rng.choice(
            ("confirmed", "cancelled") if month == 10 else ("checked_out", "cancelled", "no_show")
        )
        city = rng.choice(sorted({h.city for h in hotels}))
        first, after = _month(month)
        question = (
            f"How many bookings with a check-in date in {MONTHS[month]} 2026 are now "
            f"{status.replace('_', '-')} at each "
            f"of our {city} hotels?"
        )
        shape = "Each hotel name with its count; hotels with none can be left out."
        sql = (
            f"SELECT h.name, COUNT(*) FROM bookings b {HOTEL_JOIN} WHERE h.city = '{city}' AND b.status = "
            f"'{status}' AND b.check_in >= '{first}' AND b.check_in < '{after}' GROUP BY h.name"
        )
    elif kind == "unsold":
        hotel = rng.choice(hotels)
        question = (
            f"For the night of {spoken}, how many rooms are still unsold in each room type at {hotel.name}?"
        )
        shape = "Each room type name with the rooms left."
        sql = (
            "SELECT r.name, i.rooms_available FROM room_inventory i JOIN room_types r ON r.room_type_id = "
            f"i.room_type_id JOIN hotels h ON h.hotel_id = r.hotel_id WHERE h.name = '{hotel.name}' "
            f"AND i.night = '{night.isoformat()}'"
        )
    elif kind == "rates":
        tier = rng.choice(HOTEL_TIERS)
        question = (
            f"What is the average public nightly rate for the night of {spoken} at {tier}-tier hotels, "
            "per room type name?"
        )
        shape = "Each room type name with its average rate in dollars."
        sql = (
            "SELECT r.name, AVG(i.rate_cents) / 100.0 FROM room_inventory i JOIN room_types r "
            "ON r.room_type_id = "
            f"i.room_type_id JOIN hotels h ON h.hotel_id = r.hotel_id WHERE h.tier = '{tier}' AND i.night = "
            f"'{night.isoformat()}' GROUP BY r.name"
        )
    elif kind == "loyalty":
        loyalty = rng.choice(LOYALTY_TIERS)
        month = rng.choice(tuple(MONTHS))
        first, after = _month(month)
        question = (
            f"How many distinct {loyalty} members have a booking (any status) with a check-in date in "
            f"{MONTHS[month]} "
            "2026, per hotel tier?"
        )
        shape = "Each hotel tier with its number of distinct guests."
        sql = (
            f"SELECT h.tier, COUNT(DISTINCT b.guest_id) FROM bookings b {HOTEL_JOIN} JOIN guests g ON "
            f"g.guest_id = b.guest_id WHERE g.loyalty_tier = '{loyalty}' AND b.check_in >= '{first}' "
            f"AND b.check_in < '{after}' GROUP BY h.tier"
        )
    elif kind == "large":
        floor = rng.choice((300, 500, 800, 1_000, 1_500))
        month = rng.choice(tuple(MONTHS))
        first, after = _month(month)
        question = (
            f"How many bookings with a check-in date in {MONTHS[month]} 2026 have a room total of at least "
            f"${floor:,}, and what are they worth together, per city?"
        )
        shape = (
            "Each city with the number of such bookings and their total room value in dollars, any status."
        )
        sql = (
            f"SELECT h.city, COUNT(*), SUM(b.room_total_cents) / 100.0 FROM bookings b {HOTEL_JOIN} "
            f"WHERE b.room_total_cents >= {floor * 100} AND b.check_in >= '{first}' "
            f"AND b.check_in < '{after}' "
            "GROUP BY h.city"
        )
    else:
        city = rng.choice(sorted({h.city for h in hotels}))
        question = (
            f"For the night of {spoken}, how many rooms are sold (room count minus rooms available) at each "
            f"{city} hotel?"
        )
        shape = "Each hotel name with its rooms sold that night, all room types together."
        sql = (
            "SELECT h.name, SUM(r.room_count - i.rooms_available) FROM room_inventory i JOIN room_types r ON "
            f"r.room_type_id = i.room_type_id JOIN hotels h ON h.hotel_id = r.hotel_id "
            f"WHERE h.city = '{city}' "
            f"AND i.night = '{night.isoformat()}' GROUP BY h.name"
        )
    return _task(ctx, question, shape, sql, ["seed-slice", kind])
