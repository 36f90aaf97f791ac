"""What every hotel scenario family shares: the guest who calls, fresh rows, stays priced night by night.

Families hold ORM objects of `models.py` (a fresh booking is a `Booking`, a seed hotel is read back as a
`Hotel`), so every column is read by typed attribute, and `Scene.put` writes them as patch rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, ClassVar

from env_server.domain import Caller, ScenarioContext, ScenarioPatch, ScenarioUnavailable, day_month_year
from env_server.domains.hotel import models
from env_server.domains.hotel.factories import CARD_BRANDS, birth_date, card, invoice, phone, room_charge
from env_server.domains.hotel.factories import nightly_rate as drawn_rate
from env_server.domains.hotel.families._rules import HOTEL_TIERS, LOYALTY_POINTS, LOYALTY_TIERS, TODAY
from env_server.domains.hotel.models import (
    BookingStatus,
    CorporateAccount,
    HotelTier,
    LoyaltyTier,
    PaymentMethod,
    RatePlan,
    RoomNight,
    RoomType,
)
from env_server.domains.hotel.pricing import stay_nights, stay_price_cents
from env_server.domains.hotel.seed import (
    BASE_RATES,
    FIRST_NAMES,
    INVENTORY_FIRST_NIGHT,
    INVENTORY_LAST_NIGHT,
    LAST_NAMES,
)

# -- wording (money and dates come from the domain API: `dollars`, `day_month`, `day_month_year`) -------


def days_text(days: int) -> str:
    """A number of days in words: "1 day", "3 days"."""
    return f"{days} day" if days == 1 else f"{days} days"


def spoken_phone(phone: str) -> str:
    """A phone number as a person types it, with spaces: "+49 155 50123"."""
    return f"{phone[:3]} {phone[3:6]} {phone[6:]}"


# -- people ----------------------------------------------------------------------------------------------

MAIL_DOMAINS = ("mailbox.example", "post.example", "inbox.example", "webmail.example", "fastmail.example")


@dataclass
class Guest(Caller):
    """A fresh guest profile (its `guests` row) and what the guest says and knows when they call."""

    row: models.Guest
    identity_tool: ClassVar[str] = "verify_guest_identity"

    @property
    def id(self) -> str:
        """The guest ID."""
        return self.row.guest_id

    @property
    def tier(self) -> LoyaltyTier:
        """The guest's loyalty tier."""
        return self.row.loyalty_tier

    @property
    def name(self) -> str:
        """First and last name."""
        return f"{self.row.first_name} {self.row.last_name}"

    def identity_args(self) -> dict[str, Any]:
        """The `verify_guest_identity` arguments of a guest who gives their own details."""
        return {
            "guest_id": self.id,
            "last_name": self.row.last_name,
            "date_of_birth": self.row.date_of_birth.isoformat(),
        }

    def identity_facts(self) -> dict[str, Any]:
        """What a guest knows about themselves."""
        return {
            "email": self.row.email,
            "last_name": self.row.last_name,
            "date_of_birth": self.row.date_of_birth.isoformat(),
        }

    def identity_line(self) -> str:
        """A user line giving the last name and date of birth."""
        return f"{self.row.last_name}, born {day_month_year(self.row.date_of_birth)}."

    def persona(self, detail: str = "") -> str:
        """Who the user is: "Amara Becker, a gold member; <detail>"."""
        return f"{self.name}, a {self.tier} member; {detail}"


def new_guest(ctx: ScenarioContext, *, tier: LoyaltyTier | None = None, **extra: Any) -> Guest:
    """A fresh guest with a drawn name, contact details, birth date and tier."""
    rng = ctx.rng
    guest_id = ctx.new_id("G")
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    tier = tier or rng.choices(LOYALTY_TIERS, (35, 25, 22, 18))[0]
    low, high = LOYALTY_POINTS.get(tier, (40_000, 120_000))
    # The number keeps fresh addresses apart from each other and from the seed's @example.com ones.
    email = f"{first}.{last}.{guest_id[2:]}@{rng.choice(MAIL_DOMAINS)}".lower()
    row = models.Guest(
        guest_id=guest_id,
        first_name=first,
        last_name=last,
        email=email,
        phone=phone(rng),
        date_of_birth=birth_date(rng),
        loyalty_tier=tier,
        loyalty_points=rng.randint(low, high),
        **extra,
    )
    return Guest(row)


def new_card(ctx: ScenarioContext, guest: Guest) -> PaymentMethod:
    """A fresh card of `guest`."""
    brand, digits = ctx.rng.choice(CARD_BRANDS), ctx.rng.randint(0, 9999)
    return card(ctx.new_id("PM"), guest.id, brand, digits)


def new_account(ctx: ScenarioContext) -> tuple[CorporateAccount, PaymentMethod]:
    """A fresh corporate account and its invoice payment method."""
    rng = ctx.rng
    name = f"{rng.choice(COMPANY_WORDS)} {rng.choice(COMPANY_KINDS)}"
    account = CorporateAccount(
        account_id=ctx.new_id("CA"), company_name=name, discount_pct=rng.randint(5, 20)
    )
    return account, invoice(ctx.new_id("PM"), account.account_id, name)


COMPANY_WORDS = (
    "Northwind",
    "Bluepeak",
    "Sable",
    "Cobalt",
    "Harbor",
    "Juniper",
    "Vantage",
    "Quarry",
    "Meridia",
)
COMPANY_KINDS = ("Consulting", "Robotics", "Partners", "Pharma", "Logistics", "Media", "Capital", "Foods")


# -- what fixes the gold's values (a task's `determined_by`) -------------------------------------------

#: The refund share of a cancellation (and so the refund payment, or its absence).
REFUND_RULES = (
    "policy 4-7: the refund share follows the hotel tier, the days before check-in, the rate plan and the "
    "guest's loyalty tier"
)
#: The price of an extra, once the user has named it.
EXTRA_PRICES = (
    "policy 11: the price of the extra the user asks for (breakfast $25 per adult per night, parking $20 per "
    "night, late check-out $40), complimentary only as rule 11 says"
)
#: The ticket of a reported problem.
TICKET_BOOKING = "policy 12: the ticket is linked to the booking the problem is about"


def refund_determined() -> dict[str, str]:
    """`determined_by` of a cancellation: its refund row (amount, or none at 0%) follows rules 4 to 7."""
    return {"payments.amount_cents": REFUND_RULES}


MOODS = ("friendly", "brisk", "polite", "a little stressed", "chatty", "to the point", "formal")


# -- hotels, stays and inventory -------------------------------------------------------------------------

HOTEL_NAMES = (
    "Meridian Harbour",
    "Meridian Old Town",
    "Meridian Parkside",
    "Meridian Riverside",
    "Meridian Plaza",
)
ROOMS = (("STD", "Classic Queen", 2), ("DLX", "Deluxe King", 3), ("STE", "Executive Suite", 4))


@dataclass
class Hotel:
    """A hotel for one scenario: a seed hotel (only its room types no benchmark uses) or a fresh one."""

    row: models.Hotel
    room_types: list[RoomType]
    #: The hotel and its room types when the scenario adds them (a fresh hotel); empty for a seed hotel.
    fresh: list[object] = field(default_factory=list)

    @property
    def tier(self) -> HotelTier:
        """The hotel's tier."""
        return self.row.tier


def pick_hotel(ctx: ScenarioContext, tier: HotelTier | None = None, fresh: bool | None = None) -> Hotel:
    """A hotel of `tier` (any when None); a fresh one (with three room types) when `fresh`, or by chance."""
    if fresh is None:
        fresh = ctx.rng.random() < 0.5
    if not fresh:
        hotels = {h.hotel_id: h for h in ctx.entities(models.Hotel, lambda h: tier in (None, h.tier))}
        rooms = ctx.entities(RoomType, lambda r: r.hotel_id in hotels)
        if rooms:
            room = ctx.rng.choice(rooms)
            return Hotel(hotels[room.hotel_id], [r for r in rooms if r.hotel_id == room.hotel_id])
    drawn_tier: HotelTier = ctx.rng.choice(HOTEL_TIERS) if tier is None else tier
    hotel_id = ctx.new_id("H")
    name = ctx.rng.choice(HOTEL_NAMES)
    city = ctx.rng.choice(("Lisbon", "Berlin", "Chicago", "Kyoto"))
    row = models.Hotel(hotel_id=hotel_id, name=name, city=city, tier=drawn_tier)
    rooms = [
        RoomType(
            room_type_id=ctx.new_id("RT"),
            hotel_id=hotel_id,
            name=room,
            max_occupancy=sleeps,
            room_count=ctx.rng.randint(6, 30),
        )
        for _, room, sleeps in ROOMS
    ]
    return Hotel(row, rooms, [row, *rooms])


def nightly_rate(ctx: ScenarioContext, room_type: RoomType, hotel_tier: HotelTier, night: date) -> int:
    """The public rate of a night: the seed's inventory rate where it has one, else drawn like the seed's."""
    seeded = _seed_rates(ctx).get((room_type.room_type_id, night.isoformat()))
    if seeded is not None:
        return seeded
    base = BASE_RATES[hotel_tier][[c for c, _, _ in ROOMS].index(_category(room_type))]
    return drawn_rate(ctx.rng, base, night)


def _category(room_type: RoomType) -> str:
    return next(code for code, name, _ in ROOMS if name == room_type.name)


_RATES: dict[int, tuple[object, dict[tuple[str, str], int]]] = {}


def _seed_rates(ctx: ScenarioContext) -> dict[tuple[str, str], int]:
    """The seed's inventory rates by (room type, night), indexed once per worker process."""
    key = id(ctx.seed_tables)
    cached = _RATES.get(key)
    if cached is None or cached[0] is not ctx.seed_tables:
        index = {(r["room_type_id"], r["night"]): r["rate_cents"] for r in ctx.seed_tables["room_inventory"]}
        cached = _RATES[key] = (ctx.seed_tables, index)
    return cached[1]


@dataclass
class Stay:
    """Dates and the price of every night involved, so inventory rows and totals agree."""

    room_type: RoomType
    check_in: date
    check_out: date
    rates: dict[date, int]

    @property
    def nights(self) -> list[date]:
        """The stay's nights."""
        return stay_nights(self.check_in, self.check_out)

    def total(self, rate_plan: str = "flexible", discount_pct: int = 0) -> int:
        """The room total, as the booking system prices it."""
        return stay_price_cents(
            [self.rates[n] for n in self.nights], rate_plan=rate_plan, discount_pct=discount_pct
        )


def stay(ctx: ScenarioContext, hotel: Hotel, room_type: RoomType, check_in: date, nights: int) -> Stay:
    """A stay of `nights` from `check_in` in `room_type`, priced night by night."""
    check_out = check_in + timedelta(days=nights)
    rates = {n: nightly_rate(ctx, room_type, hotel.tier, n) for n in stay_nights(check_in, check_out)}
    return Stay(room_type, check_in, check_out, rates)


def future_stay(
    ctx: ScenarioContext, hotel: Hotel, room_type: RoomType, days: int, nights: int, margin: int = 0
) -> Stay:
    """A stay starting `days` from today, ending inside the loaded inventory with `margin` nights to spare."""
    check_in = TODAY + timedelta(days=days)
    if check_in + timedelta(days=nights + margin - 1) > INVENTORY_LAST_NIGHT:
        raise ScenarioUnavailable("stay runs past the loaded inventory")
    return stay(ctx, hotel, room_type, check_in, nights)


def stay_in_progress(
    ctx: ScenarioContext,
    hotel: Hotel,
    room_type: RoomType,
    *,
    arrived: tuple[int, int],
    left: tuple[int, int],
) -> Stay:
    """A stay that began `arrived` days ago (drawn from the range) with `left` more nights (likewise)."""
    check_in = TODAY - timedelta(days=ctx.rng.randint(*arrived))
    return stay(ctx, hotel, room_type, check_in, (TODAY - check_in).days + ctx.rng.randint(*left))


def guest_at_hotel(ctx: ScenarioContext) -> tuple[Hotel, Guest, PaymentMethod, RoomType]:
    """A hotel, a fresh guest, the guest's card and a room type of the hotel: a one-guest scene's cast."""
    hotel = pick_hotel(ctx)
    guest = new_guest(ctx)
    card = new_card(ctx, guest)
    return hotel, guest, card, ctx.rng.choice(hotel.room_types)


def inventory(ctx: ScenarioContext, room_type: RoomType, rates: dict[date, int]) -> list[RoomNight]:
    """`room_inventory` rows with a free room on each loaded night of `rates`, at those rates."""
    return [
        RoomNight(
            room_type_id=room_type.room_type_id,
            night=night,
            rate_cents=rate,
            rooms_available=ctx.rng.randint(1, 6),
        )
        for night, rate in sorted(rates.items())
        if INVENTORY_FIRST_NIGHT <= night <= INVENTORY_LAST_NIGHT
    ]


def complete_inventory(ctx: ScenarioContext, hotel: Hotel, rows: list[RoomNight]) -> list[RoomNight]:
    """`rows`, plus, at a fresh hotel, every other room type's inventory on the same nights.

    So `search_availability` (which prices every room type of the hotel) works there as at a seed hotel.
    """
    if not hotel.fresh:
        return rows
    have = {(r.room_type_id, r.night) for r in rows}
    nights = sorted({r.night for r in rows})
    extra = [
        RoomNight(
            room_type_id=rt.room_type_id,
            night=night,
            rate_cents=nightly_rate(ctx, rt, hotel.tier, night),
            rooms_available=ctx.rng.randint(0, 6),
        )
        for rt in hotel.room_types
        for night in nights
        if (rt.room_type_id, night) not in have
    ]
    return rows + extra


def booking(
    ctx: ScenarioContext,
    guest: Guest,
    s: Stay,
    method: PaymentMethod,
    *,
    rate_plan: RatePlan = "flexible",
    status: BookingStatus = "confirmed",
    account: CorporateAccount | None = None,
) -> tuple[models.Booking, models.Payment]:
    """A booking of `s` for `guest` paid by `method`, and the payment that charged its room total."""
    total = s.total(rate_plan, account.discount_pct if account else 0)
    created = datetime.combine(min(s.check_in, TODAY) - timedelta(days=ctx.rng.randint(3, 40)), time(10))
    row = models.Booking(
        booking_id=ctx.new_id("BK"),
        guest_id=guest.id,
        room_type_id=s.room_type.room_type_id,
        corporate_account_id=account.account_id if account else None,
        payment_method_id=method.payment_method_id,
        check_in=s.check_in,
        check_out=s.check_out,
        adults=ctx.rng.randint(1, min(2, s.room_type.max_occupancy)),
        rate_plan=rate_plan,
        status=status,
        room_total_cents=total,
        created_at=created,
    )
    return row, room_charge(ctx.new_id("PAY"), row)


class Scene(ScenarioPatch):
    """The `initial_patch` of one hotel task, its tables listed as hotel task files list them."""

    table_order = tuple(
        str(model.__tablename__)
        for model in (
            models.Hotel,
            RoomType,
            RoomNight,
            CorporateAccount,
            models.Guest,
            PaymentMethod,
            models.Booking,
            models.BookingExtra,
            models.Payment,
            models.ApprovalRequest,
            models.SupportTicket,
            models.LoyaltyTransaction,
        )
    )
