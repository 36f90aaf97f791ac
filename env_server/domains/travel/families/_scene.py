"""Fresh customers, trips and flights for the travel scenario families.

A `Scene` collects the `initial_patch` of one generated task: a fresh passenger (IDs from `ctx.new_id`, so no
seed row and no benchmark task shares them) with a card and maybe a loyalty account, their reservation with
travellers, segments and the fare payment, bags, and fresh flights when a scenario needs a disruption of its
own. Reference data (scheduled flights, seat prices, fare classes) comes from the seed through `ctx.pick` and
`ctx.rows`, which only return rows no benchmark task mentions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from env_server.domain import (
    Caller,
    GoldAction,
    ScenarioPatch,
    ScenarioUnavailable,
    call,
    month_day_year,
    patch_rows,
)
from env_server.domains.travel.factories import (
    BaggageSpec,
    FlightSpec,
    LoyaltyAccountSpec,
    PassengerSpec,
    PaymentSpec,
    ReservationSpec,
    SeatInventorySpec,
    SegmentSpec,
    TravelerSpec,
    card,
    phone,
)
from env_server.domains.travel.families._policy import TIERS, Row, when
from env_server.domains.travel.fares import fare_price_cents
from env_server.domains.travel.models import NOW

#: Seats per cabin of a fresh flight (as in the seed).
CABIN_SEATS = {"economy": 150, "business": 16}

# fmt: off
_FIRST = (
    "Adaeze", "Bjorn", "Carmen", "Desmond", "Eliza", "Florian", "Greta", "Hamza", "Ines", "Joaquin",
    "Kalani", "Lorenzo", "Mirela", "Nikhil", "Orla", "Pieter", "Rosalind", "Stellan", "Tamsin", "Ugo",
    "Valeria", "Wilhelmina", "Xavier", "Yasmin", "Zoltan", "Anouk", "Bastien", "Celeste", "Dario", "Esme",
)
_LAST = (
    "Achebe", "Bergstrom", "Cardenas", "Donnelly", "Espinoza", "Fairweather", "Grimaldi", "Halvorsen",
    "Ibarra", "Jovanovic", "Kirkland", "Lachance", "Mbeki", "Northcott", "Oyelaran", "Pellegrini",
    "Quintero", "Rasmussen", "Sandoval", "Thorne", "Urquhart", "Vasquez", "Whitlock", "Yamada", "Zeller",
)
_TRAITS = (
    "polite and brief", "chatty, gives more detail than needed", "in a hurry, types in short bursts",
    "a little frustrated but reasonable", "careful, double-checks every amount", "friendly and relaxed",
    "a frequent flyer who knows the jargon", "travelling with family and a bit stressed",
)
# fmt: on
_MAIL_DOMAINS = ("example.com", "example.org", "example.net")
_CARDS = ("Visa", "Mastercard", "Amex")


@dataclass
class Person(Caller):
    """A fresh passenger profile with a credit card (and a loyalty account when `tier` is set)."""

    identity_tool: ClassVar[str] = "verify_passenger_identity"

    passenger_id: str
    first: str
    last: str
    email: str
    phone: str
    dob: date
    card_id: str
    card_brand: str
    card_last4: str
    tier: str | None
    loyalty_id: str | None

    @property
    def name(self) -> str:
        """First and last name."""
        return f"{self.first} {self.last}"

    @property
    def card(self) -> str:
        """How the customer names their card: "Visa card ending in 4242"."""
        return f"{self.card_brand} card ending in {self.card_last4}"

    def identity_args(self, dob: date | None = None) -> dict[str, Any]:
        """The identity check's arguments with the details this person gives (`dob` to give a wrong one)."""
        return {"email": self.email, "last_name": self.last, "date_of_birth": (dob or self.dob).isoformat()}

    def verify(self, dob: date | None = None) -> GoldAction:
        """The identity check with the details this person gives (`dob` to give a wrong one)."""
        return call(self.identity_tool, **self.identity_args(dob))

    def identity_facts(self) -> dict[str, Any]:
        """What the caller knows about themselves, their card included."""
        return {
            "email": self.email,
            "last_name": self.last,
            "date_of_birth": self.dob.isoformat(),
            "payment": self.card,
        }

    def identity_line(self, dob: date | None = None) -> str:
        """The user's turn that answers the identity questions."""
        return (
            f"Sure: my email is {self.email}, last name {self.last}, born {month_day_year(dob or self.dob)}."
        )

    def persona(self, detail: str = "") -> str:
        """Who the caller is: their name and the scenario's `detail` (`Scene.persona` adds how they talk)."""
        return f"{self.name}, {detail}"


@dataclass
class Traveller:
    """A person flying on a generated reservation."""

    traveler_id: str
    first: str
    last: str
    dob: date
    is_holder: bool

    @property
    def name(self) -> str:
        """First and last name."""
        return f"{self.first} {self.last}"


@dataclass
class Trip:
    """A generated reservation: its holder, fare class row, flights (seed or fresh rows) and travellers."""

    reservation_id: str
    holder: Person
    fare: Row
    flights: list[Row]
    fares_cents: list[int]
    travellers: list[Traveller]
    booked_at: datetime

    @property
    def ticket_value(self) -> int:
        """Sum of the segment fares times the number of travellers (rule 7)."""
        return sum(self.fares_cents) * len(self.travellers)

    @property
    def cabin(self) -> str:
        """The cabin of the fare class."""
        return str(self.fare["cabin"])

    def get(self) -> GoldAction:
        """The look-up an agent makes first."""
        return call("get_reservation", reservation_id=self.reservation_id)


@dataclass
class Scene(ScenarioPatch):
    """The `initial_patch` of one generated task, and the seed reference data it is built from."""

    _numbers: set[str] = field(default_factory=set)
    _names: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.fares: dict[str, Row] = {r["code"]: r for r in self.ctx.seed_tables["fare_classes"]}
        self.inventory: dict[tuple[str, str], Row] = {
            (r["flight_id"], r["cabin"]): r for r in self.ctx.seed_tables["seat_inventory"]
        }

    # ------------------------------------------------------------------------------------------ people
    def _name(self) -> tuple[str, str]:
        for _ in range(50):
            name = (self.rng.choice(_FIRST), self.rng.choice(_LAST))
            if name not in self._names:
                self._names.add(name)
                return name
        raise ScenarioUnavailable("no fresh name left")

    def persona(self, person: Person | str, role: str) -> str:
        """A persona line: who the user is and how they talk."""
        who = person.persona(role) if isinstance(person, Person) else f"{person}, {role}"
        return f"{who}; {self.rng.choice(_TRAITS)}"

    def person(self, tier: str | None = None, *, loyalty: float = 0.6) -> Person:
        """A fresh passenger with one credit card, and a loyalty account at `tier` (or, by chance, any)."""
        first, last = self._name()
        pid = self.ctx.new_id("PX")
        if tier is None and self.rng.random() < loyalty:
            tier = self.rng.choices(TIERS, weights=(35, 30, 20, 15))[0]
        person = Person(
            passenger_id=pid,
            first=first,
            last=last,
            email=f"{first}.{last}.{pid[-5:]}@{self.rng.choice(_MAIL_DOMAINS)}".lower(),
            phone=phone(self.rng),
            dob=date(1950, 1, 1) + timedelta(days=self.rng.randint(0, 19_000)),
            card_id=self.ctx.new_id("PM"),
            card_brand=self.rng.choice(_CARDS),
            card_last4=f"{self.rng.randint(0, 9999):04d}",
            tier=tier,
            loyalty_id=self.ctx.new_id("LY") if tier else None,
        )
        self.add(
            patch_rows(
                PassengerSpec(pid, first, last, person.email, person.phone, person.dob),
                card(person.card_id, pid, person.card_brand, person.card_last4),
            )
        )
        if tier and person.loyalty_id:
            miles = self.rng.randint(0, 900) * 100
            enrolled = date(2012, 1, 1) + timedelta(days=self.rng.randint(0, 5000))
            self.add(patch_rows(LoyaltyAccountSpec(person.loyalty_id, pid, tier, miles, enrolled)))
        return person

    def companion(self, holder: Person) -> tuple[str, str, date]:
        """Someone travelling with `holder` (often the same family name), not yet on any reservation here."""
        for _ in range(50):
            last = holder.last if self.rng.random() < 0.6 else self.rng.choice(_LAST)
            name = (self.rng.choice(_FIRST), last)
            if name not in self._names and name[0] != holder.first:
                self._names.add(name)
                return name[0], name[1], date(1948, 1, 1) + timedelta(days=self.rng.randint(0, 27_000))
        raise ScenarioUnavailable("no fresh companion name left")

    # ----------------------------------------------------------------------------------------- flights
    def seats(self, flight_id: str, cabin: str) -> int:
        """Seats still for sale in a cabin of a seed flight (or of a fresh one in this patch)."""
        for row in self.patch["seat_inventory"]:
            if (row["flight_id"], row["cabin"]) == (flight_id, cabin):
                return int(row["seats_available"])
        return int(self.inventory[flight_id, cabin]["seats_available"])

    def price(self, flight: Row, fare: Row) -> int:
        """Today's price of one seat of `fare` on `flight` (the system's own formula)."""
        base = next(
            (
                r["base_price_cents"]
                for r in self.patch["seat_inventory"]
                if (r["flight_id"], r["cabin"]) == (flight["flight_id"], fare["cabin"])
            ),
            None,
        )
        if base is None:
            base = self.inventory[flight["flight_id"], fare["cabin"]]["base_price_cents"]
        return fare_price_cents(int(base), int(fare["price_pct"]))

    def upcoming(self, where: Callable[[Row], bool] = lambda _: True) -> Row:
        """A seed flight still to depart on time (scheduled, no delay) that matches `where`."""
        return self.ctx.pick(
            "flights",
            lambda f: f["status"] == "scheduled" and when(f) > NOW + timedelta(hours=3) and where(f),
        )

    def alternative(
        self, flight: Row, cabin: str, seats: int, where: Callable[[Row], bool] = lambda _: True
    ) -> Row:
        """Another bookable seed flight on the same route with `seats` free in `cabin`."""
        return self.ctx.pick(
            "flights",
            lambda f: (
                (f["origin"], f["destination"]) == (flight["origin"], flight["destination"])
                and f["flight_id"] != flight["flight_id"]
                and f["status"] == "scheduled"
                and when(f) > NOW + timedelta(hours=3)
                and self.seats(f["flight_id"], cabin) >= seats
                and where(f)
            ),
        )

    def flown_before(self, flight: Row) -> Row | None:
        """A landed seed flight on the reverse route, the day before `flight` or earlier (an outbound leg)."""
        options = self.ctx.rows(
            "flights",
            lambda f: (
                (f["origin"], f["destination"]) == (flight["destination"], flight["origin"])
                and f["status"] == "landed"
                and when(f).date() < when(flight).date()
            ),
        )
        return self.rng.choice(options) if options else None

    def return_after(self, flight: Row, cabin: str, seats: int) -> Row | None:
        """A bookable seed flight on the reverse route 2-6 days after `flight` (a return leg)."""
        options = self.ctx.rows(
            "flights",
            lambda f: (
                (f["origin"], f["destination"]) == (flight["destination"], flight["origin"])
                and f["status"] == "scheduled"
                and 2 <= (when(f).date() - when(flight).date()).days <= 6
                and self.seats(f["flight_id"], cabin) >= seats
            ),
        )
        return self.rng.choice(options) if options else None

    def fresh_flight(
        self, like: Row, day: date, status: str, delay: int = 0, cause: str | None = None
    ) -> Row:
        """A new departure of `like`'s route and time on `day`, under a flight number of its own."""
        departure = datetime.combine(day, when(like).time())
        duration = datetime.fromisoformat(like["arrival_at"]) - when(like)
        number = f"GS{self.rng.randint(7000, 7999)}"
        if number in self._numbers:
            raise ScenarioUnavailable("flight number drawn twice")
        self._numbers.add(number)
        flight = FlightSpec(
            flight_id=self.ctx.new_id("FL"),
            flight_number=number,
            origin=like["origin"],
            destination=like["destination"],
            departure_at=departure,
            arrival_at=departure + duration,
            distance_miles=like["distance_miles"],
            status=status,
            delay_minutes=delay,
            disruption_cause=cause,
        ).row()
        landed = departure + duration + timedelta(minutes=delay) <= NOW
        if (status == "landed" and not landed) or (status in ("scheduled", "delayed") and departure <= NOW):
            raise ScenarioUnavailable(f"a {status} flight cannot depart at {departure}")
        self.patch["flights"].append(flight)
        for cabin, total in CABIN_SEATS.items():
            available = total - self.rng.randint(1, total // 2)
            base = self.inventory[like["flight_id"], cabin]["base_price_cents"]
            self.add(patch_rows(SeatInventorySpec(flight["flight_id"], cabin, total, available, base)))
        return flight

    # ------------------------------------------------------------------------------------ reservations
    def trip(
        self,
        holder: Person,
        fare_code: str,
        flights: list[Row],
        travellers: int = 1,
        *,
        holder_flies: bool = True,
        booked_at: datetime | None = None,
    ) -> Trip:
        """A confirmed reservation on `flights`, paid in full by the holder's card when it was booked."""
        fare = self.fares[fare_code]
        first_departure = when(flights[0])
        if booked_at is None:
            latest = min(NOW - timedelta(days=2), first_departure - timedelta(days=3))
            booked_at = latest - timedelta(days=self.rng.randint(0, 50), minutes=self.rng.randint(0, 600))
        booked_at = booked_at.replace(second=0, microsecond=0)
        rid = self.ctx.new_id("RS")
        trip_type = "round_trip" if len(flights) == 2 else "one_way"
        self.add(
            patch_rows(
                ReservationSpec(rid, holder.passenger_id, fare_code, trip_type, "confirmed", booked_at)
            )
        )
        people = [(holder.first, holder.last, holder.dob, True)] if holder_flies else []
        while len(people) < travellers:
            people.append((*self.companion(holder), False))
        crew = [
            Traveller(self.ctx.new_id("TR"), f, last, dob, is_holder) for f, last, dob, is_holder in people
        ]
        for t in crew:
            flies = holder.passenger_id if t.is_holder else None
            self.add(patch_rows(TravelerSpec(t.traveler_id, rid, flies, t.first, t.last, t.dob)))
        fares_cents = []
        for seq, flight in enumerate(flights, start=1):
            paid = self.price(flight, fare) * self.rng.choice((90, 100, 100, 110)) // 100
            fares_cents.append(paid)
            segment = SegmentSpec(self.ctx.new_id("SG"), rid, seq, flight["flight_id"], fare["cabin"], paid)
            self.add(patch_rows(segment))
        trip = Trip(rid, holder, fare, flights, fares_cents, crew, booked_at)
        self.payment(trip, "fare", trip.ticket_value, booked_at)
        return trip

    def payment(self, trip: Trip, purpose: str, amount: int, at: datetime) -> None:
        """A charge to the holder's card on `trip`."""
        charge = PaymentSpec(
            self.ctx.new_id("PY"), trip.reservation_id, trip.holder.card_id, "charge", purpose, amount, at
        )
        self.add(patch_rows(charge))

    def bags(self, trip: Trip, traveller: Traveller, quantity: int, fee: int) -> None:
        """Bags already checked for `traveller` (and their fee, charged when they were added)."""
        bag_id = self.ctx.new_id("BG")
        self.add(patch_rows(BaggageSpec(bag_id, trip.reservation_id, traveller.traveler_id, quantity, fee)))
        if fee:
            self.payment(trip, "baggage", fee, trip.booked_at)

    def initial_patch(self) -> dict[str, list[Row]]:
        """The patch, as a plain dict of non-empty tables."""
        return {table: rows for table, rows in self.patch.items() if rows}
