"""The hotel seed: eight hotels in four cities, ~180 guests and a few hundred bookings around 1 October 2026.

Everything random comes from the `rng` argument, and rows are generated in a fixed order, so the same seed
value gives the same rows on every run and backend. Seeded IDs use the 1xxxx range (guests `G-1xxx`,
bookings `BK-1xxxx`); task files add their own entities in the 2xxxx (test) and 3xxxx (train) ranges, and
tools generate IDs from 90001 up.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from sqlalchemy.orm import Session

from env_server.domains.hotel.factories import (
    CARD_BRANDS,
    birth_date,
    card,
    invoice,
    nightly_rate,
    payment,
    phone,
)
from env_server.domains.hotel.models import (
    NOW,
    ApprovalRequest,
    ApprovalStatus,
    Booking,
    BookingExtra,
    BookingStatus,
    ChangeType,
    CorporateAccount,
    ExtraKind,
    Guest,
    Hotel,
    HotelTier,
    LoyaltyTier,
    LoyaltyTransaction,
    Payment,
    PaymentKind,
    PaymentMethod,
    PaymentPurpose,
    RatePlan,
    RoomNight,
    RoomType,
    SupportTicket,
    TicketCategory,
)
from env_server.domains.hotel.pricing import extra_price_cents, stay_nights, stay_price_cents

TODAY = NOW.date()
#: Nights with rates and inventory loaded (both inclusive); bookings outside it cannot be made or moved.
INVENTORY_FIRST_NIGHT = date(2026, 10, 1)
INVENTORY_LAST_NIGHT = date(2026, 11, 10)
#: Earliest arrival of the booking history.
HISTORY_START = date(2026, 7, 1)

HOTELS: list[tuple[str, str, str, HotelTier]] = [
    ("H-01", "Alfama Budget Stay", "Lisbon", "budget"),
    ("H-02", "Tagus Riverside Hotel", "Lisbon", "premium"),
    ("H-03", "Spree Central Hotel", "Berlin", "standard"),
    ("H-04", "Grand Hotel Tiergarten", "Berlin", "luxury"),
    ("H-05", "Loop Express Inn", "Chicago", "budget"),
    ("H-06", "Lakeshore Premier", "Chicago", "premium"),
    ("H-07", "Gion Garden Hotel", "Kyoto", "standard"),
    ("H-08", "Higashiyama Palace", "Kyoto", "luxury"),
]
#: Per room category: code, name, sleeps, rooms (min, max).
ROOM_CATEGORIES = [
    ("STD", "Classic Queen", 2, (20, 40)),
    ("DLX", "Deluxe King", 3, (10, 24)),
    ("STE", "Executive Suite", 4, (4, 10)),
]
#: Base nightly rate in dollars for STD, DLX, STE by hotel tier.
BASE_RATES: dict[HotelTier, tuple[int, int, int]] = {
    "budget": (85, 115, 160),
    "standard": (140, 185, 270),
    "premium": (240, 320, 480),
    "luxury": (420, 590, 950),
}
CORPORATE_ACCOUNTS = [
    ("CA-01", "Brightline Logistics", 12),
    ("CA-02", "Kestrel Analytics", 15),
    ("CA-03", "Orchard & Vale LLP", 10),
    ("CA-04", "Tidewater Energy", 18),
    ("CA-05", "Lumen Health Group", 8),
]
# fmt: off
FIRST_NAMES = (
    "Amara", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam",
    "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wes", "Xin",
    "Yara", "Zoltan", "Aiko", "Bruno", "Carmen", "Diego", "Esther", "Felix", "Greta", "Hassan", "Ida",
    "Jamal", "Kira", "Lorenzo", "Mei", "Noah", "Oscar", "Priya", "Rafael", "Sofia", "Tomas", "Ulla",
    "Viktor", "Wanda", "Yusuf", "Zara",
)
LAST_NAMES = (
    "Abara", "Becker", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jansen",
    "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Schmidt",
    "Tanaka", "Ulrich", "Varga", "Weber", "Xu", "Yilmaz", "Zimmermann", "Almeida", "Brennan", "Costa",
    "Delgado", "Evans", "Fontaine", "Gupta", "Horvat", "Ivanova", "Jovanovic", "Keller", "Lambert",
    "Mensah", "Novak", "Oliveira", "Park", "Reyes", "Sato", "Torres", "Vogel", "Walsh", "Young",
)
# fmt: on
LOYALTY_TIERS: tuple[tuple[LoyaltyTier, int, int, int], ...] = (
    ("blue", 45, 0, 4000),
    ("silver", 28, 4000, 15000),
    ("gold", 17, 15000, 40000),
    ("platinum", 10, 40000, 120000),
)
TICKET_SUMMARIES: dict[TicketCategory, str] = {
    "noise": "Loud music from the neighbouring room after midnight.",
    "cleanliness": "Bathroom had not been cleaned on arrival.",
    "maintenance": "Air conditioning stopped working overnight.",
    "billing": "Minibar items charged that were never taken.",
    "other": "Wake-up call was never made.",
}
APPROVAL_NOTES: dict[ApprovalStatus, str] = {
    "pending": "Requested by the traveler; awaiting the travel manager.",
    "rejected": "Travel manager declined: outside the travel policy.",
}
GOODWILL_POINTS: dict[TicketCategory, int] = {"noise": 1000, "cleanliness": 1000, "maintenance": 2500}
N_GUESTS = 180
N_BOOKINGS = 260
N_TICKETS = 35


@dataclass
class _Ids:
    """Sequential seed IDs per prefix."""

    counters: dict[str, int]

    def next(self, prefix: str, width: int) -> str:
        value = self.counters.get(prefix, 10 ** (width - 1)) + 1
        self.counters[prefix] = value
        return f"{prefix}-{value:0{width}d}"


def seed(session: Session, rng: random.Random) -> None:
    """Fill an empty hotel database; the same `rng` state always gives the same rows."""
    ids = _Ids({})
    hotels = [Hotel(hotel_id=h, name=n, city=c, tier=t) for h, n, c, t in HOTELS]
    room_types, rates = _room_types_and_rates(rng, hotels)
    room_counts = {rt.room_type_id: rt.room_count for rt in room_types}
    inventory = {
        (rt_id, night): RoomNight(
            room_type_id=rt_id, night=night, rate_cents=rate, rooms_available=_unsold(rng, room_counts[rt_id])
        )
        for (rt_id, night), rate in rates.items()
        if night >= INVENTORY_FIRST_NIGHT
    }
    accounts = [
        CorporateAccount(account_id=a, company_name=n, discount_pct=d) for a, n, d in CORPORATE_ACCOUNTS
    ]
    guests = _guests(rng, ids, accounts)
    cards: dict[str, list[PaymentMethod]] = {}
    for guest in guests:
        cards[guest.guest_id] = [_card(rng, ids, guest) for _ in range(1 if rng.random() < 0.7 else 2)]
    invoices = {a.account_id: invoice(ids.next("PM", 4), a.account_id, a.company_name) for a in accounts}
    for rows in (hotels, room_types, accounts, guests, invoices.values()):
        session.add_all(rows)
    session.add_all([pm for g in guests for pm in cards[g.guest_id]])
    session.flush()

    by_id = {a.account_id: a for a in accounts}
    bookings: list[Booking] = []
    for _ in range(N_BOOKINGS):
        booking = _booking(rng, ids, guests, room_types, rates, inventory, by_id, cards, invoices)
        bookings.append(booking)
        session.add(booking)
    session.add_all(inventory.values())
    session.flush()
    _money_and_history(session, rng, ids, bookings, room_types, guests)


def _room_types_and_rates(
    rng: random.Random, hotels: list[Hotel]
) -> tuple[list[RoomType], dict[tuple[str, date], int]]:
    room_types: list[RoomType] = []
    rates: dict[tuple[str, date], int] = {}
    nights = (INVENTORY_LAST_NIGHT - HISTORY_START).days + 1
    for hotel in hotels:
        for (code, name, sleeps, (lo, hi)), base in zip(ROOM_CATEGORIES, BASE_RATES[hotel.tier], strict=True):
            rt_id = f"RT-{hotel.hotel_id[2:]}-{code}"
            rt = RoomType(
                room_type_id=rt_id,
                hotel_id=hotel.hotel_id,
                name=name,
                max_occupancy=sleeps,
                room_count=rng.randint(lo, hi),
            )
            room_types.append(rt)
            for offset in range(nights):
                night = HISTORY_START + timedelta(days=offset)
                rates[rt_id, night] = nightly_rate(rng, base, night)
    return room_types, rates


def _unsold(rng: random.Random, room_count: int) -> int:
    if rng.random() < 0.04:
        return 0
    return room_count - rng.randint(0, room_count * 2 // 3)


def _guests(rng: random.Random, ids: _Ids, accounts: list[CorporateAccount]) -> list[Guest]:
    guests: list[Guest] = []
    emails: set[str] = set()
    tiers, weights = [t[0] for t in LOYALTY_TIERS], [t[1] for t in LOYALTY_TIERS]
    points_range = {t[0]: (t[2], t[3]) for t in LOYALTY_TIERS}
    for _ in range(N_GUESTS):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        email = f"{first}.{last}@example.com".lower()
        while email in emails:
            email = f"{first}.{last}{rng.randint(2, 99)}@example.com".lower()
        emails.add(email)
        tier = rng.choices(tiers, weights)[0]
        guest_id = ids.next("G", 4)
        guests.append(
            Guest(
                guest_id=guest_id,
                first_name=first,
                last_name=last,
                email=email,
                phone=phone(rng),
                date_of_birth=birth_date(rng),
                loyalty_tier=tier,
                loyalty_points=rng.randint(*points_range[tier]),
            )
        )
    members = rng.sample(guests, 8 * len(accounts))
    for i, account in enumerate(accounts):
        for j, guest in enumerate(members[8 * i : 8 * i + 8]):
            guest.corporate_account_id = account.account_id
            guest.corporate_role = "coordinator" if j == 0 else "traveler"
    return guests


def _card(rng: random.Random, ids: _Ids, guest: Guest) -> PaymentMethod:
    return card(ids.next("PM", 4), guest.guest_id, rng.choice(CARD_BRANDS), rng.randint(0, 9999))


def _booking(
    rng: random.Random,
    ids: _Ids,
    guests: list[Guest],
    room_types: list[RoomType],
    rates: dict[tuple[str, date], int],
    inventory: dict[tuple[str, date], RoomNight],
    accounts: dict[str, CorporateAccount],
    cards: dict[str, list[PaymentMethod]],
    invoices: dict[str, PaymentMethod],
) -> Booking:
    statuses: list[BookingStatus] = ["checked_out", "no_show", "cancelled", "checked_in", "confirmed"]
    status = rng.choices(statuses, [30, 3, 12, 10, 45])[0]
    guest = rng.choice(guests)
    account = (
        accounts[guest.corporate_account_id] if guest.corporate_account_id and rng.random() < 0.8 else None
    )
    while True:
        rt = rng.choice(room_types)
        check_in, check_out = _stay_dates(rng, status)
        held = [
            inventory[rt.room_type_id, n]
            for n in stay_nights(check_in, check_out)
            if (rt.room_type_id, n) in inventory
        ]
        if status not in ("confirmed", "checked_in") or all(r.rooms_available > 0 for r in held):
            break
    for night in held if status in ("confirmed", "checked_in") else []:
        night.rooms_available -= 1
    rate_plan: RatePlan = "flexible" if account or rng.random() < 0.75 else "non_refundable"
    created = datetime.combine(check_in - timedelta(days=rng.randint(2, 80)), time(rng.randint(7, 22)))
    created = min(created, NOW - timedelta(hours=rng.randint(2, 400)))
    cancelled = created + (NOW - created) * rng.random() if status == "cancelled" else None
    return Booking(
        booking_id=ids.next("BK", 5),
        guest_id=guest.guest_id,
        room_type_id=rt.room_type_id,
        corporate_account_id=account.account_id if account else None,
        payment_method_id=(
            invoices[account.account_id] if account else rng.choice(cards[guest.guest_id])
        ).payment_method_id,
        check_in=check_in,
        check_out=check_out,
        adults=rng.randint(1, rt.max_occupancy),
        rate_plan=rate_plan,
        status=status,
        room_total_cents=stay_price_cents(
            [rates[rt.room_type_id, n] for n in stay_nights(check_in, check_out)],
            rate_plan=rate_plan,
            discount_pct=account.discount_pct if account else 0,
        ),
        created_at=created,
        cancelled_at=cancelled.replace(microsecond=0) if cancelled else None,
        cancellation_reason=rng.choice(["Change of plans", "Trip postponed", "Found other accommodation"])
        if cancelled
        else None,
    )


def _stay_dates(rng: random.Random, status: str) -> tuple[date, date]:
    nights = rng.randint(1, 5)
    if status in ("checked_out", "no_show") or (status == "cancelled" and rng.random() < 0.4):
        check_in = HISTORY_START + timedelta(days=rng.randint(0, (TODAY - HISTORY_START).days - 6))
        return check_in, check_in + timedelta(days=nights)
    if status == "checked_in":
        check_in = TODAY - timedelta(days=rng.randint(1, 4))
        return check_in, TODAY + timedelta(days=rng.randint(1, 4))
    last_arrival = INVENTORY_LAST_NIGHT - timedelta(days=nights - 1)
    check_in = TODAY + timedelta(days=rng.randint(0, (last_arrival - TODAY).days))
    return check_in, check_in + timedelta(days=nights)


def _money_and_history(
    session: Session,
    rng: random.Random,
    ids: _Ids,
    bookings: list[Booking],
    room_types: list[RoomType],
    guests: list[Guest],
) -> None:
    """Payments, extras, loyalty history, support tickets and approval requests for the seeded bookings."""
    rows: list[object] = []
    for b in bookings:
        rows.append(_payment(ids, b, "charge", "room", b.room_total_cents, b.created_at))
        if b.cancelled_at is not None and b.rate_plan == "flexible":
            refund = b.room_total_cents * rng.choice([100, 100, 50, 0]) // 100
            if refund:
                rows.append(_payment(ids, b, "refund", "cancellation_refund", refund, b.cancelled_at))
        if b.status in ("confirmed", "checked_in", "checked_out") and rng.random() < 0.18:
            extras: list[ExtraKind] = ["breakfast", "parking", "late_checkout"]
            extra = rng.choice(extras)
            price = extra_price_cents(extra, adults=b.adults, nights=(b.check_out - b.check_in).days)
            rows.append(
                BookingExtra(booking_id=b.booking_id, extra=extra, price_cents=price, complimentary=False)
            )
        if b.status == "checked_out" and b.room_total_cents >= 100:
            rows.append(
                LoyaltyTransaction(
                    transaction_id=ids.next("LT", 5),
                    guest_id=b.guest_id,
                    booking_id=b.booking_id,
                    kind="stay",
                    points=b.room_total_cents // 100,
                    created_at=datetime.combine(b.check_out, time(11)),
                )
            )
    redeemers = rng.sample([g for g in guests if g.loyalty_points >= 10000], 12)
    for guest in redeemers:
        rows.append(
            LoyaltyTransaction(
                transaction_id=ids.next("LT", 5),
                guest_id=guest.guest_id,
                kind="redemption",
                points=-rng.choice([5000, 7500, 10000]),
                created_at=NOW - timedelta(days=rng.randint(3, 80)),
            )
        )
    tickets: list[SupportTicket] = []
    stays = [b for b in bookings if b.status in ("checked_in", "checked_out")]
    for b in rng.sample(stays, N_TICKETS):
        category = rng.choice(list(TICKET_SUMMARIES))
        ticket = SupportTicket(
            ticket_id=ids.next("TK", 5),
            guest_id=b.guest_id,
            booking_id=b.booking_id,
            category=category,
            status="open" if b.status == "checked_in" and rng.random() < 0.5 else "resolved",
            summary=TICKET_SUMMARIES[category],
            created_at=min(NOW, datetime.combine(b.check_in + timedelta(days=1), time(rng.randint(6, 23)))),
        )
        tickets.append(ticket)
        if category in GOODWILL_POINTS and rng.random() < 0.5:
            rows.append(
                LoyaltyTransaction(
                    transaction_id=ids.next("LT", 5),
                    guest_id=b.guest_id,
                    booking_id=b.booking_id,
                    ticket_id=ticket.ticket_id,
                    kind="goodwill",
                    points=GOODWILL_POINTS[category],
                    created_at=ticket.created_at,
                )
            )
    rows.extend(_approval_requests(rng, ids, bookings, room_types))
    session.add_all(tickets)
    session.flush()  # tickets first: goodwill transactions refer to them
    session.add_all(rows)
    session.flush()


def _payment(
    ids: _Ids, b: Booking, kind: PaymentKind, purpose: PaymentPurpose, cents: int, at: datetime
) -> Payment:
    return payment(ids.next("PAY", 5), b, kind, purpose, cents, at)


def _approval_requests(
    rng: random.Random, ids: _Ids, bookings: list[Booking], room_types: list[RoomType]
) -> list[ApprovalRequest]:
    """Pending and rejected requests on large corporate bookings (approved ones would have been applied)."""
    large = [
        b
        for b in bookings
        if b.corporate_account_id and b.status == "confirmed" and b.room_total_cents >= 100_000
    ]
    requests = []
    for b in rng.sample(large, min(6, len(large))):
        changes: list[ChangeType] = ["change_dates", "change_room_type", "cancel"]
        change = rng.choice(changes)
        hotel = b.room_type_id[:5]
        others = [rt.room_type_id for rt in room_types if rt.room_type_id.startswith(hotel)]
        others.remove(b.room_type_id)
        shift = timedelta(days=rng.choice([1, 2, 7]))
        decisions: list[ApprovalStatus] = ["pending", "rejected"]
        status = rng.choice(decisions)
        requests.append(
            ApprovalRequest(
                approval_id=ids.next("APR", 5),
                booking_id=b.booking_id,
                requested_by_guest_id=b.guest_id,
                change_type=change,
                new_check_in=b.check_in + shift if change == "change_dates" else None,
                new_check_out=b.check_out + shift if change == "change_dates" else None,
                new_room_type_id=rng.choice(others) if change == "change_room_type" else None,
                status=status,
                note=APPROVAL_NOTES[status],
                created_at=NOW - timedelta(days=rng.randint(1, 10)),
            )
        )
    return requests
