"""Deterministic seed of the travel domain: 23 days of flights around the frozen clock and the trips on them.

Everything random comes from the `rng` argument, so a given seed gives the same rows on every run and every
backend. Seeded IDs count up from 10001 per prefix; generated ones start at 90001.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from sqlalchemy.orm import Session

from env_server.domains.travel.factories import (
    BaggageSpec,
    FlightSpec,
    LoyaltyAccountSpec,
    MileageTransactionSpec,
    PassengerSpec,
    PaymentMethodSpec,
    PaymentSpec,
    ReservationSpec,
    SeatInventorySpec,
    SegmentSpec,
    TravelerSpec,
    card,
    phone,
)
from env_server.domains.travel.fares import (
    TIER_BAG_BONUS,
    alert_contact,
    baggage_fee_cents,
    fare_price_cents,
    flight_miles,
)
from env_server.domains.travel.models import (
    NOW,
    Airport,
    Base,
    Compensation,
    FareClass,
    Flight,
    FlightAlert,
    LoyaltyAccount,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    SeatInventory,
    SupervisorReview,
    Traveler,
)

AIRPORTS = [
    ("ATL", "Atlanta", "Hartsfield-Jackson Atlanta International"),
    ("AUS", "Austin", "Austin-Bergstrom International"),
    ("BOS", "Boston", "Logan International"),
    ("DEN", "Denver", "Denver International"),
    ("JFK", "New York", "John F. Kennedy International"),
    ("LAX", "Los Angeles", "Los Angeles International"),
    ("MIA", "Miami", "Miami International"),
    ("ORD", "Chicago", "O'Hare International"),
    ("SEA", "Seattle", "Seattle-Tacoma International"),
    ("SFO", "San Francisco", "San Francisco International"),
]

#: Daily schedule: flight number, origin, destination, distance in miles, departure time (UTC).
SCHEDULE = [
    ("GS101", "JFK", "LAX", 2475, "08:00"),
    ("GS103", "JFK", "LAX", 2475, "17:30"),
    ("GS102", "LAX", "JFK", 2475, "07:15"),
    ("GS104", "LAX", "JFK", 2475, "15:00"),
    ("GS211", "ORD", "SFO", 1846, "09:10"),
    ("GS212", "SFO", "ORD", 1846, "13:40"),
    ("GS321", "BOS", "MIA", 1258, "06:45"),
    ("GS322", "MIA", "BOS", 1258, "12:20"),
    ("GS431", "SEA", "DEN", 1024, "10:30"),
    ("GS432", "DEN", "SEA", 1024, "16:05"),
    ("GS541", "ATL", "ORD", 606, "07:50"),
    ("GS542", "ORD", "ATL", 606, "18:15"),
    ("GS651", "DEN", "AUS", 775, "11:25"),
    ("GS652", "AUS", "DEN", 775, "19:00"),
]
FIRST_DAY = date(2026, 9, 22)
DAYS = 23

#: code, name, cabin, price %, changeable, change fee, free bags, miles %, refund % (>=7 d, >=24 h, <24 h).
FARE_CLASSES = [
    ("BASIC", "Basic Economy", "economy", 80, False, 0, 0, 50, (0, 0, 0)),
    ("STANDARD", "Standard Economy", "economy", 100, True, 7500, 1, 100, (75, 50, 0)),
    ("FLEX", "Flex Economy", "economy", 130, True, 0, 1, 150, (100, 100, 50)),
    ("BUSINESS", "Business", "business", 100, True, 0, 2, 200, (100, 100, 100)),
]
FARE_WEIGHTS = {"BASIC": 25, "STANDARD": 40, "FLEX": 20, "BUSINESS": 15}
CABIN_SEATS = {"economy": 150, "business": 16}
CONTROLLABLE = ("mechanical", "crew", "operational")
CAUSES = ("weather", "air_traffic", "mechanical", "crew", "operational")
DELAYS = (35, 55, 80, 120, 150, 190, 215, 250, 300, 340, 375, 420, 480)

FIRST_NAMES = [
    "Amelia",
    "Noah",
    "Olivia",
    "Liam",
    "Sofia",
    "Mateo",
    "Hannah",
    "Ethan",
    "Priya",
    "Arjun",
    "Chloe",
    "Lucas",
    "Grace",
    "Omar",
    "Leila",
    "Daniel",
    "Mia",
    "Samuel",
    "Zoe",
    "Isaac",
    "Nora",
    "Caleb",
    "Aisha",
    "Henry",
    "Yuki",
    "Kenji",
    "Elena",
    "Marco",
    "Fatima",
    "Jonas",
    "Ingrid",
    "Diego",
    "Clara",
    "Felix",
    "Maya",
    "Owen",
    "Ruth",
    "Tomas",
    "Vera",
    "Wesley",
    "Ava",
    "Benjamin",
    "Camila",
    "Dmitri",
    "Esther",
    "Farah",
    "Gabriel",
    "Helen",
    "Ivan",
    "Julia",
]
LAST_NAMES = [
    "Anderson",
    "Brennan",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lindqvist",
    "Morales",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Ueda",
    "Valdez",
    "Walsh",
    "Xu",
    "Yilmaz",
    "Zhang",
    "Abbott",
    "Bauer",
    "Chen",
    "Delgado",
    "Evans",
    "Foster",
    "Gupta",
    "Hughes",
    "Iyer",
    "Johansson",
    "Keller",
    "Lopez",
    "Meyer",
    "Novak",
    "Ortiz",
    "Park",
    "Reyes",
    "Silva",
    "Turner",
    "Vargas",
    "Weber",
    "Young",
]

PASSENGERS = 160
RESERVATIONS = 190


@dataclass
class _Ids:
    """Sequential seeded IDs per prefix: PX-10001, PX-10002, ..."""

    counters: dict[str, int] = field(default_factory=lambda: defaultdict(lambda: 10001))

    def next(self, prefix: str) -> str:
        value = self.counters[prefix]
        self.counters[prefix] = value + 1
        return f"{prefix}-{value}"


def _at(day: date, hhmm: str) -> datetime:
    hours, minutes = hhmm.split(":")
    return datetime(day.year, day.month, day.day, int(hours), int(minutes))


def _days() -> Iterator[date]:
    return (FIRST_DAY + timedelta(days=i) for i in range(DAYS))


def _status(flight: Flight) -> str:
    """The status a flight has at the frozen clock, given its schedule, delay and cancellation."""
    if flight.status == "cancelled":
        return "cancelled"
    delay = timedelta(minutes=flight.delay_minutes)
    if flight.arrival_at + delay <= NOW:
        return "landed"
    if flight.departure_at + delay <= NOW:
        return "departed"
    return "delayed" if flight.delay_minutes else "scheduled"


def _flights(rng: random.Random, ids: _Ids) -> list[Flight]:
    flights = []
    for day in _days():
        for number, origin, destination, miles, hhmm in SCHEDULE:
            departure = _at(day, hhmm)
            duration = (45 + miles * 60 // 500 + 4) // 5 * 5
            flight = FlightSpec(
                flight_id=ids.next("FL"),
                flight_number=number,
                origin=origin,
                destination=destination,
                departure_at=departure,
                arrival_at=departure + timedelta(minutes=duration),
                distance_miles=miles,
                status="scheduled",
                delay_minutes=0,
                disruption_cause=None,
            ).orm()
            hours_ahead = (departure - NOW).total_seconds() / 3600
            cancel_p, delay_p = (0.03, 0.15) if hours_ahead < 48 else (0.01, 0.0)
            roll = rng.random()
            if roll < cancel_p:
                flight.status = "cancelled"
                flight.disruption_cause = rng.choice(CAUSES)
            elif roll < delay_p:
                flight.delay_minutes = rng.choice(DELAYS)
                flight.disruption_cause = rng.choice(CAUSES)
            flight.status = _status(flight)
            flights.append(flight)
    return flights


def _inventory(rng: random.Random, flights: list[Flight]) -> dict[tuple[str, str], SeatInventory]:
    inventory = {}
    for flight in flights:
        nominal = 80 + flight.distance_miles * 12 // 100
        level = rng.choice((90, 100, 100, 110, 125))
        economy_dollars = (nominal * level // 100 + 5) // 10 * 10
        business_dollars = (nominal * 32 // 10 * level // 100 + 5) // 10 * 10
        for cabin, dollars, sold in (
            ("economy", economy_dollars, rng.randint(30, 110)),
            ("business", business_dollars, rng.randint(0, 9)),
        ):
            total = CABIN_SEATS[cabin]
            inventory[flight.flight_id, cabin] = SeatInventorySpec(
                flight.flight_id, cabin, total, total - sold, dollars * 100
            ).orm()
    return inventory


def _passengers(rng: random.Random, ids: _Ids) -> list[Passenger]:
    names = rng.sample(range(len(FIRST_NAMES) * len(LAST_NAMES)), PASSENGERS)
    passengers = []
    for n in names:
        first, last = FIRST_NAMES[n % len(FIRST_NAMES)], LAST_NAMES[n // len(FIRST_NAMES)]
        passengers.append(
            PassengerSpec(
                passenger_id=ids.next("PX"),
                first_name=first,
                last_name=last,
                email=f"{first}.{last}@example.com".lower(),
                phone=phone(rng),
                date_of_birth=date(1950, 1, 1) + timedelta(days=rng.randint(0, 19500)),
            ).orm()
        )
    return passengers


def _loyalty(rng: random.Random, ids: _Ids, passengers: list[Passenger]) -> dict[str, LoyaltyAccount]:
    accounts = {}
    for p in passengers:
        if rng.random() < 0.65:
            accounts[p.passenger_id] = LoyaltyAccountSpec(
                loyalty_id=ids.next("LY"),
                passenger_id=p.passenger_id,
                tier=rng.choices(("member", "silver", "gold", "platinum"), weights=(40, 28, 20, 12))[0],
                miles_balance=rng.randint(0, 1800) * 100,
                enrolled_on=date(2010, 1, 1) + timedelta(days=rng.randint(0, 5600)),
            ).orm()
    return accounts


def _payment_methods(rng: random.Random, ids: _Ids, passengers: list[Passenger]) -> list[PaymentMethod]:
    methods = []
    for p in passengers:
        for _ in range(2 if rng.random() < 0.4 else 1):
            methods.append(
                card(
                    ids.next("PM"),
                    p.passenger_id,
                    rng.choice(("Visa", "Mastercard", "Amex")),
                    f"{rng.randint(0, 9999):04d}",
                ).orm()
            )
        if rng.random() < 0.2:
            methods.append(
                PaymentMethodSpec(
                    payment_method_id=ids.next("PM"),
                    passenger_id=p.passenger_id,
                    kind="voucher",
                    balance_cents=rng.choice((5000, 10000, 15000, 20000, 25000)),
                    expires_on=date(2027, rng.randint(1, 12), 28),
                ).orm()
            )
    return methods


def _refund_pct(fare: FareClass, booked_at: datetime, cancelled_at: datetime, departure: datetime) -> int:
    """Policy rule 7 applied at `cancelled_at` (seeded cancellations never involve cancelled flights)."""
    hours = (departure - cancelled_at).total_seconds() / 3600
    if cancelled_at - booked_at <= timedelta(hours=24) and hours >= 168:
        return 100
    if hours >= 168:
        return fare.refund_pct_week_plus
    return fare.refund_pct_day_plus if hours >= 24 else fare.refund_pct_last_day


@dataclass
class _World:
    """Rows built so far, with the indexes the later steps need."""

    flights: list[Flight]
    inventory: dict[tuple[str, str], SeatInventory]
    passengers: list[Passenger]
    loyalty: dict[str, LoyaltyAccount]
    methods: list[PaymentMethod]
    fares: dict[str, FareClass]
    rows: list[Base] = field(default_factory=list)
    by_day_number: dict[tuple[date, str], Flight] = field(default_factory=dict)
    cards: dict[str, list[PaymentMethod]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        self.by_day_number = {(f.departure_at.date(), f.flight_number): f for f in self.flights}
        for m in self.methods:
            if m.kind == "credit_card":
                self.cards[m.passenger_id].append(m)

    def tier(self, passenger_id: str) -> str:
        account = self.loyalty.get(passenger_id)
        return account.tier if account else "member"


def _pick_flights(rng: random.Random, world: _World, cabin: str, seats: int) -> list[Flight] | None:
    outbound = rng.choice(world.flights)
    legs = [outbound]
    if rng.random() < 0.55:
        back_day = outbound.departure_at.date() + timedelta(days=rng.randint(2, 6))
        returns = [
            world.by_day_number[back_day, number]
            for number, origin, destination, _, _ in SCHEDULE
            if (origin, destination) == (outbound.destination, outbound.origin)
            and (back_day, number) in world.by_day_number
        ]
        if returns:
            legs.append(rng.choice(returns))
    if any(world.inventory[f.flight_id, cabin].seats_available < seats for f in legs):
        return None
    return legs


def _travelers(rng: random.Random, holder: Passenger, count: int) -> list[tuple[str, str, date, bool]]:
    people: list[tuple[str, str, date, bool]] = []
    if rng.random() < 0.85:
        people.append((holder.first_name, holder.last_name, holder.date_of_birth, True))
    while len(people) < count:
        last = holder.last_name if rng.random() < 0.6 else rng.choice(LAST_NAMES)
        first = rng.choice(FIRST_NAMES)
        if all((first, last) != (p[0], p[1]) for p in people):
            born = date(1948, 1, 1) + timedelta(days=rng.randint(0, 27000))
            people.append((first, last, born, False))
    return people


def _reservation(rng: random.Random, ids: _Ids, world: _World) -> None:
    holder = rng.choice(world.passengers)
    fare = world.fares[rng.choices(list(FARE_WEIGHTS), weights=list(FARE_WEIGHTS.values()))[0]]
    count = rng.choices((1, 2, 3, 4), weights=(55, 30, 12, 3))[0]
    legs = None
    while legs is None:
        legs = _pick_flights(rng, world, fare.cabin, count)
    first_departure = legs[0].departure_at
    booked_at = first_departure - timedelta(days=rng.randint(3, 75), minutes=rng.randint(0, 600))
    if booked_at >= NOW:
        booked_at = NOW - timedelta(hours=rng.randint(30, 400))
    if first_departure - NOW >= timedelta(days=7) and rng.random() < 0.12:
        booked_at = NOW - timedelta(hours=rng.randint(1, 20))
    booked_at = booked_at.replace(second=0, microsecond=0)
    cancelled_at = None
    if rng.random() < 0.08:
        latest = min(NOW, first_departure)
        span = int((latest - booked_at).total_seconds() // 60)
        if span > 60:
            cancelled_at = booked_at + timedelta(minutes=rng.randint(30, span - 30))
    reservation = ReservationSpec(
        reservation_id=ids.next("RS"),
        holder_id=holder.passenger_id,
        fare_class=fare.code,
        trip_type="round_trip" if len(legs) == 2 else "one_way",
        status="cancelled" if cancelled_at else "confirmed",
        booked_at=booked_at,
        cancelled_at=cancelled_at,
        cancel_reason="Plans changed" if cancelled_at else None,
    ).orm()
    world.rows.append(reservation)
    rid = reservation.reservation_id
    travelers = [
        TravelerSpec(
            traveler_id=ids.next("TR"),
            reservation_id=rid,
            passenger_id=holder.passenger_id if is_holder else None,
            first_name=first,
            last_name=last,
            date_of_birth=born,
        ).orm()
        for first, last, born, is_holder in _travelers(rng, holder, count)
    ]
    world.rows.extend(travelers)
    segments = []
    for seq, flight in enumerate(legs, start=1):
        price = fare_price_cents(
            world.inventory[flight.flight_id, fare.cabin].base_price_cents, fare.price_pct
        )
        segments.append(
            SegmentSpec(
                segment_id=ids.next("SG"),
                reservation_id=rid,
                seq=seq,
                flight_id=flight.flight_id,
                cabin=fare.cabin,
                fare_cents=price * rng.choice((90, 100, 100, 110)) // 100,
            ).orm()
        )
        if not cancelled_at:
            world.inventory[flight.flight_id, fare.cabin].seats_available -= len(travelers)
    world.rows.extend(segments)
    card = rng.choice(world.cards[holder.passenger_id])
    fares_total = sum(s.fare_cents for s in segments) * len(travelers)
    world.rows.append(_payment(ids, rid, card.payment_method_id, "charge", "fare", fares_total, booked_at))
    if cancelled_at:
        pct = _refund_pct(fare, booked_at, cancelled_at, first_departure)
        if pct:
            refund = fares_total * pct // 100
            world.rows.append(
                _payment(
                    ids, rid, card.payment_method_id, "refund", "cancellation_refund", refund, cancelled_at
                )
            )
        return
    if rng.random() < 0.35:
        allowance = fare.free_bags + TIER_BAG_BONUS[world.tier(holder.passenger_id)]
        fees = 0
        for traveler in travelers:
            quantity = rng.choice((0, 0, 1, 1, 2))
            if quantity:
                fee = baggage_fee_cents(0, quantity, allowance)
                fees += fee
                world.rows.append(BaggageSpec(ids.next("BG"), rid, traveler.traveler_id, quantity, fee).orm())
        if fees:
            world.rows.append(
                _payment(ids, rid, card.payment_method_id, "charge", "baggage", fees, booked_at)
            )
    _after_travel(rng, ids, world, reservation, travelers, legs, fare)


def _payment(
    ids: _Ids, rid: str, method: str, direction: str, purpose: str, amount: int, at: datetime
) -> Payment:
    return PaymentSpec(ids.next("PY"), rid, method, direction, purpose, amount, at).orm()


#: Compensation per traveller (policy rule 10), by disruption, and the tier bonus per traveller.
_COMPENSATION = {"delay_3h": 10000, "delay_6h": 20000, "cancelled": 25000}
_TIER_COMPENSATION_BONUS = {"member": 0, "silver": 2500, "gold": 5000, "platinum": 10000}


def _after_travel(
    rng: random.Random,
    ids: _Ids,
    world: _World,
    reservation: Reservation,
    travelers: list[Traveler],
    legs: list[Flight],
    fare: FareClass,
) -> None:
    """Miles credited for flown flights (some missing) and compensation already paid (for some)."""
    account = world.loyalty.get(reservation.holder_id)
    holder_flew = any(t.passenger_id == reservation.holder_id for t in travelers)
    for flight in legs:
        if flight.status == "landed" and account and holder_flew and rng.random() < 0.85:
            world.rows.append(
                MileageTransactionSpec(
                    transaction_id=ids.next("MT"),
                    loyalty_id=account.loyalty_id,
                    reservation_id=reservation.reservation_id,
                    flight_id=flight.flight_id,
                    kind="flight",
                    miles=flight_miles(flight.distance_miles, fare.miles_pct),
                    created_at=min(NOW, flight.arrival_at + timedelta(minutes=flight.delay_minutes + 180)),
                ).orm()
            )
        if flight.disruption_cause not in CONTROLLABLE or rng.random() < 0.6:
            continue
        if flight.status == "cancelled":
            base = _COMPENSATION["cancelled"]
        elif flight.status == "landed" and flight.delay_minutes >= 180:
            base = _COMPENSATION["delay_6h" if flight.delay_minutes >= 360 else "delay_3h"]
        else:
            continue
        amount = (base + _TIER_COMPENSATION_BONUS[world.tier(reservation.holder_id)]) * len(travelers)
        if amount > 50000:
            continue
        voucher = PaymentMethod(
            payment_method_id=ids.next("PM"),
            passenger_id=reservation.holder_id,
            kind="voucher",
            balance_cents=amount,
            expires_on=date(2027, 9, 30),
        )
        world.rows.append(voucher)
        world.rows.append(
            Compensation(
                compensation_id=ids.next("CP"),
                reservation_id=reservation.reservation_id,
                flight_id=flight.flight_id,
                amount_cents=amount,
                voucher_id=voucher.payment_method_id,
                issued_at=min(NOW, flight.arrival_at + timedelta(days=1)),
            )
        )


def _reviews_and_alerts(rng: random.Random, ids: _Ids, world: _World) -> None:
    reservations = [r for r in world.rows if isinstance(r, Reservation) and r.status == "confirmed"]
    for status in ("approved", "rejected", "pending"):
        reservation = rng.choice(reservations)
        world.rows.append(
            SupervisorReview(
                review_id=ids.next("SR"),
                reservation_id=reservation.reservation_id,
                category=rng.choice(("compensation", "refund_exception")),
                amount_cents=rng.randint(20, 120) * 1000,
                status=status,
                summary="Customer asked for more than the policy grants; escalated.",
                created_at=NOW - timedelta(days=rng.randint(1, 9), hours=rng.randint(0, 8)),
            )
        )
    upcoming = [f for f in world.flights if f.departure_at > NOW]
    for flight in rng.sample(upcoming, 30):
        person = rng.choice(world.passengers)
        by_sms = rng.random() < 0.4
        world.rows.append(
            FlightAlert(
                alert_id=ids.next("FA"),
                flight_id=flight.flight_id,
                channel="sms" if by_sms else "email",
                contact=alert_contact("sms", person.phone) if by_sms else person.email,
                created_at=NOW - timedelta(hours=rng.randint(2, 300)),
            )
        )


def seed(session: Session, rng: random.Random) -> None:
    """Fill an empty travel database: airports, fares, flights and seats, customers and their trips.

    Args:
        session: a session on a database holding the travel tables and nothing else.
        rng: the only source of randomness.
    """
    ids = _Ids()
    fares = {
        code: FareClass(
            code=code,
            name=name,
            cabin=cabin,
            price_pct=price_pct,
            changeable=changeable,
            change_fee_cents=fee,
            free_bags=bags,
            miles_pct=miles,
            refund_pct_week_plus=refunds[0],
            refund_pct_day_plus=refunds[1],
            refund_pct_last_day=refunds[2],
        )
        for code, name, cabin, price_pct, changeable, fee, bags, miles, refunds in FARE_CLASSES
    }
    flights = _flights(rng, ids)
    passengers = _passengers(rng, ids)
    world = _World(
        flights=flights,
        inventory=_inventory(rng, flights),
        passengers=passengers,
        loyalty=_loyalty(rng, ids, passengers),
        methods=_payment_methods(rng, ids, passengers),
        fares=fares,
    )
    for _ in range(RESERVATIONS):
        _reservation(rng, ids, world)
    _reviews_and_alerts(rng, ids, world)
    for flight in rng.sample([f for f in flights if f.departure_at > NOW], 25):
        world.inventory[flight.flight_id, "business"].seats_available = 0
    rows: list[Base] = [Airport(code=c, city=city, name=name) for c, city, name in AIRPORTS]
    rows += [*fares.values(), *flights, *world.inventory.values(), *passengers, *world.loyalty.values()]
    rows += [*world.methods, *world.rows]
    by_table: dict[str, list[Base]] = defaultdict(list)
    for row in rows:
        by_table[type(row).__tablename__].append(row)
    for table in Base.metadata.sorted_tables:
        session.add_all(by_table.pop(table.name, []))
        session.flush()
