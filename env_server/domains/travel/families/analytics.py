"""Analytics families: read-only questions from airline staff, each a parameterised, portable gold SELECT.

Parameters are anchored on a seed row (a flight, a segment, a reservation) so the answer is never empty, and
every date is compared as an ISO literal, so the same SQL runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta

from env_server.domain import ScenarioContext, analytics_task, month_day
from env_server.domains.travel.families._policy import TIERS
from shared.tasks import Task

_STAFF = (
    "You are staff, asking a read-only question. Clarify the expected table if asked; accept an answer in "
    "the shape you asked for."
)
_OPS = ("Dana Okoro, operations controller", "Luis Ferreira, duty manager at the operations centre")
_SALES = (
    "Marcus Feld, revenue analyst",
    "Priya Raman, pricing analyst",
    "Ingrid Holm, loyalty programme manager",
)

Question = tuple[str, list[str], str, list[str], float | None]


def _day(value: str) -> date:
    return datetime.fromisoformat(value).date()


def _span(ctx: ScenarioContext, anchor: date) -> tuple[date, date]:
    """A window of 1-4 days that contains `anchor`."""
    start = anchor - timedelta(days=ctx.rng.randint(0, 2))
    return start, max(anchor, start) + timedelta(days=ctx.rng.randint(1, 2))


def _between(column: str, start: date, end: date) -> str:
    return f"{column} >= '{start.isoformat()}' AND {column} < '{end.isoformat()}'"


def _days(start: date, end: date) -> str:
    last = end - timedelta(days=1)
    return f"on {month_day(start)}" if last == start else f"from {month_day(start)} to {month_day(last)}"


def _disruptions(ctx: ScenarioContext) -> Question:
    flight = ctx.pick("flights", lambda f: f["disruption_cause"] is not None)
    start, end = _span(ctx, _day(flight["departure_at"]))
    return (
        f"Flights delayed or cancelled per cause, departing {_days(start, end)}.",
        [
            f"How many flights scheduled to depart {_days(start, end)} 2026 were delayed (any delay) or "
            "cancelled, per disruption cause?",
            "One row per cause code as stored (e.g. crew) with the number of flights.",
        ],
        f"SELECT disruption_cause, COUNT(*) FROM flights WHERE disruption_cause IS NOT NULL "
        f"AND {_between('departure_at', start, end)} GROUP BY disruption_cause",
        ["group-by", "date-filter", "disruption"],
        None,
    )


def _seats_sold(ctx: ScenarioContext) -> Question:
    flight = ctx.pick("flights")
    cabin = ctx.rng.choice(("economy", "business"))
    day = _day(flight["departure_at"])
    return (
        f"{cabin.capitalize()} seats sold per flight number on {day.isoformat()}.",
        [
            f"For each flight scheduled to depart on {month_day(day)}, 2026, how many {cabin} seats are "
            f"sold (total {cabin} seats minus those still available)?",
            "One row per flight number (like GS101) with the seats sold.",
        ],
        f"SELECT f.flight_number, si.seats_total - si.seats_available FROM flights f "
        f"JOIN seat_inventory si ON si.flight_id = f.flight_id WHERE si.cabin = '{cabin}' "
        f"AND {_between('f.departure_at', day, day + timedelta(days=1))}",
        ["inventory", "date-filter", "multi-row"],
        0.0,
    )


def _travellers_by_fare(ctx: ScenarioContext) -> Question:
    segment = ctx.pick("segments")
    flight = next(f for f in ctx.seed_tables["flights"] if f["flight_id"] == segment["flight_id"])
    start, end = _span(ctx, _day(flight["departure_at"]))
    return (
        f"Travellers per fare class on flights departing {_days(start, end)} (confirmed reservations).",
        [
            f"How many travellers are booked on flights scheduled to depart {_days(start, end)} 2026, per "
            "fare class? Confirmed reservations only; a traveller counts once per flight.",
            "One row per fare class code (BASIC, STANDARD, ...) with the number of travellers.",
        ],
        "SELECT r.fare_class, COUNT(*) FROM segments s JOIN flights f ON f.flight_id = s.flight_id "
        "JOIN reservations r ON r.reservation_id = s.reservation_id "
        "JOIN travelers t ON t.reservation_id = r.reservation_id "
        f"WHERE r.status = 'confirmed' AND {_between('f.departure_at', start, end)} GROUP BY r.fare_class",
        ["join", "date-filter", "group-by", "travellers"],
        None,
    )


def _route_delays(ctx: ScenarioContext) -> Question:
    flight = ctx.pick("flights", lambda f: f["status"] == "landed")
    origin, destination = flight["origin"], flight["destination"]
    late = ctx.rng.choice((1, 15, 30, 60, 120, 180))
    return (
        f"Landed {origin}-{destination} flights: how many, how many {late}+ minutes late, total delay.",
        [
            f"For the route {origin} to {destination}, how many flights have landed, how many of them landed "
            f"at least {late} minutes late, and what is the total arrival delay of all of them in minutes?",
            "One row with three numbers: landed flights, the late ones, total delay minutes.",
        ],
        f"SELECT COUNT(*), SUM(CASE WHEN delay_minutes >= {late} THEN 1 ELSE 0 END), SUM(delay_minutes) "
        f"FROM flights WHERE status = 'landed' AND origin = '{origin}' AND destination = '{destination}'",
        ["conditional-count", "punctuality"],
        0.0,
    )


def _route_value(ctx: ScenarioContext) -> Question:
    segment = ctx.pick("segments")
    flight = next(f for f in ctx.seed_tables["flights"] if f["flight_id"] == segment["flight_id"])
    origin, destination = flight["origin"], flight["destination"]
    start, end = _span(ctx, _day(flight["departure_at"]))
    return (
        f"Ticket value per fare class on {origin}-{destination} flights departing {_days(start, end)}.",
        [
            f"What ticket value did we sell on {origin} to {destination} flights scheduled to depart "
            f"{_days(start, end)} 2026, per fare class? Ticket value is each segment's fare times the number "
            "of travellers on its reservation; cancelled reservations included.",
            "One row per fare class code with the ticket value in cents.",
        ],
        "SELECT r.fare_class, SUM(s.fare_cents * (SELECT COUNT(*) FROM travelers t "
        "WHERE t.reservation_id = s.reservation_id)) FROM segments s "
        "JOIN flights f ON f.flight_id = s.flight_id "
        "JOIN reservations r ON r.reservation_id = s.reservation_id "
        f"WHERE f.origin = '{origin}' AND f.destination = '{destination}' "
        f"AND {_between('f.departure_at', start, end)} GROUP BY r.fare_class",
        ["correlated-subquery", "money", "date-filter"],
        0.0,
    )


def _net_revenue(ctx: ScenarioContext) -> Question:
    reservation = ctx.pick("reservations")
    start, end = _span(ctx, _day(reservation["booked_at"]))
    return (
        f"Net fare revenue per fare class of reservations booked {_days(start, end)}.",
        [
            f"For reservations booked {_days(start, end)} 2026, what is the net fare revenue per fare class: "
            "fare charges minus cancellation refunds (ignore change, upgrade and baggage payments)?",
            "One row per fare class code with the net amount in cents.",
        ],
        "SELECT r.fare_class, SUM(CASE WHEN p.direction = 'charge' THEN p.amount_cents "
        "ELSE -p.amount_cents END) FROM payments p "
        "JOIN reservations r ON r.reservation_id = p.reservation_id "
        f"WHERE p.purpose IN ('fare', 'cancellation_refund') AND {_between('r.booked_at', start, end)} "
        "GROUP BY r.fare_class",
        ["conditional-sum", "money", "date-filter"],
        0.0,
    )


def _bags_by_tier(ctx: ScenarioContext) -> Question:
    bag = ctx.pick("baggage")
    reservation = next(
        r for r in ctx.seed_tables["reservations"] if r["reservation_id"] == bag["reservation_id"]
    )
    code = reservation["fare_class"]
    first = next(
        s["flight_id"]
        for s in ctx.seed_tables["segments"]
        if s["reservation_id"] == bag["reservation_id"] and s["seq"] == 1
    )
    origin = next(f["origin"] for f in ctx.seed_tables["flights"] if f["flight_id"] == first)
    return (
        f"Checked bags and fees per holder loyalty tier, {code} trips starting at {origin}.",
        [
            f"On {code} reservations whose first flight departs from {origin}, how many checked bags are on "
            "the books and how much was charged for them, per loyalty tier of the reservation holder? "
            "Holders without a loyalty account go in a group none.",
            "One row per tier (member, silver, gold, platinum, none): tier, bags, fees in cents.",
        ],
        "SELECT COALESCE(la.tier, 'none'), SUM(b.quantity), SUM(b.fee_cents) FROM baggage b "
        "JOIN reservations r ON r.reservation_id = b.reservation_id "
        "JOIN segments s ON s.reservation_id = r.reservation_id AND s.seq = 1 "
        "JOIN flights f ON f.flight_id = s.flight_id "
        "LEFT JOIN loyalty_accounts la ON la.passenger_id = r.holder_id "
        f"WHERE r.fare_class = '{code}' AND f.origin = '{origin}' GROUP BY COALESCE(la.tier, 'none')",
        ["left-join", "group-by", "baggage"],
        0.0,
    )


def _loyalty_cohort(ctx: ScenarioContext) -> Question:
    account = ctx.pick("loyalty_accounts")
    year = _day(account["enrolled_on"]).year + ctx.rng.randint(1, 3)
    others = [t for t in TIERS if t != account["tier"]]
    tiers = [account["tier"], *ctx.rng.sample(others, ctx.rng.randint(1, 3))]
    listed = ", ".join(f"'{t}'" for t in sorted(tiers))
    return (
        f"Loyalty accounts enrolled before {year} in tiers {', '.join(sorted(tiers))}: count and miles.",
        [
            f"How many loyalty members of tier {' or '.join(sorted(tiers))} enrolled before {year}, and how "
            "many miles do they hold, per tier?",
            "One row per tier: tier, number of accounts, total miles balance.",
        ],
        f"SELECT tier, COUNT(*), SUM(miles_balance) FROM loyalty_accounts WHERE tier IN ({listed}) "
        f"AND enrolled_on < '{year}-01-01' GROUP BY tier",
        ["group-by", "loyalty", "date-filter"],
        0.0,
    )


def _build(
    ctx: ScenarioContext, questions: list[Callable[[ScenarioContext], Question]], staff: tuple[str, ...]
) -> Task:
    description, script, sql, tags, tolerance = ctx.rng.choice(questions)(ctx)
    return analytics_task(
        ctx,
        persona=f"{ctx.rng.choice(staff)} at Groundstate Air; precise",
        description=description,
        script=script,
        sql=sql,
        tags=tags,
        instructions=_STAFF,
        tolerance=tolerance or 0.0,
    )


def operations_question(ctx: ScenarioContext) -> Task:
    """Rule 5 in numbers: disruptions, delays, seats sold and passengers, for a drawn day, route or window."""
    return _build(ctx, [_disruptions, _seats_sold, _travellers_by_fare, _route_delays], _OPS)


def commercial_question(ctx: ScenarioContext) -> Task:
    """Rules 2, 7, 12 in numbers: ticket value, net fare revenue, baggage fees and loyalty cohorts."""
    return _build(ctx, [_route_value, _net_revenue, _bags_by_tier, _loyalty_cohort], _SALES)
