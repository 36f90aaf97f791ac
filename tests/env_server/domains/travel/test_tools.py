"""Travel domain: tools run through the server's tool execution on a seeded SQLite sandbox, plus the seed,
policy and task-catalogue invariants."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from importlib import resources
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from env_server.domain import ToolError
from env_server.domains.travel import domain
from env_server.domains.travel.fares import fare_price_cents, flight_miles
from env_server.domains.travel.models import (
    NOW,
    Baggage,
    Compensation,
    FareClass,
    Flight,
    FlightAlert,
    IdentityVerification,
    LoyaltyAccount,
    MileageTransaction,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    SeatInventory,
    Segment,
    SupervisorReview,
    Traveler,
)
from tests.domain_sandbox import build_database, count_rows, engine_over, sandbox_fixture, tool_caller

#: The action tasks (analytics tasks have their own checks in the analytics tests).
ACTION_TASKS = [t for t in domain.tasks if t.kind == "action"]

#: A fresh seeded sandbox for each test (a copy of the template).
session = sandbox_fixture(domain, name="session")
call = tool_caller(domain)


def verify(session: Session, passenger_id: str) -> dict[str, Any]:
    p = session.get(Passenger, passenger_id)
    assert p is not None
    return call(
        session,
        "verify_passenger_identity",
        email=p.email,
        last_name=p.last_name,
        date_of_birth=p.date_of_birth.isoformat(),
    )


def segments(session: Session, rid: str) -> list[Segment]:
    return list(session.scalars(select(Segment).where(Segment.reservation_id == rid).order_by(Segment.seq)))


def travelers(session: Session, rid: str) -> list[Traveler]:
    return list(session.scalars(select(Traveler).where(Traveler.reservation_id == rid)))


def flights_of(session: Session, rid: str) -> list[Flight]:
    return [session.get(Flight, s.flight_id) for s in segments(session, rid)]  # type: ignore[misc]


def card_of(session: Session, passenger_id: str) -> str:
    return session.scalars(
        select(PaymentMethod.payment_method_id).where(
            PaymentMethod.passenger_id == passenger_id, PaymentMethod.kind == "credit_card"
        )
    ).first()  # type: ignore[return-value]


def upcoming(
    session: Session,
    fare: str,
    *,
    min_hours: int = 48,
    n: int | None = None,
    one_way: bool = False,
    ok: Callable[[Reservation], bool] = lambda r: True,
) -> Reservation:
    """The first confirmed `fare` reservation with every flight scheduled `min_hours` ahead or more."""
    for r in session.scalars(
        select(Reservation)
        .where(Reservation.fare_class == fare, Reservation.status == "confirmed")
        .order_by(Reservation.reservation_id)
    ):
        fl = flights_of(session, r.reservation_id)
        if n is not None and len(travelers(session, r.reservation_id)) != n:
            continue
        if (one_way and r.trip_type != "one_way") or not ok(r):
            continue
        if all(f.status == "scheduled" for f in fl) and fl[0].departure_at - NOW >= timedelta(
            hours=min_hours
        ):
            return r
    raise LookupError(fare)


def same_number_later(session: Session, flight: Flight, days: int = 1) -> Flight:
    start = flight.departure_at + timedelta(days=days)
    found = session.scalars(
        select(Flight).where(Flight.flight_number == flight.flight_number, Flight.departure_at == start)
    ).one()
    return found


# ---------------------------------------------------------------- seed, policy, catalogue


def test_seed_is_deterministic_and_has_over_a_thousand_rows() -> None:
    dumps = []
    for _ in range(2):
        engine = engine_over(build_database(domain))
        with engine.connect() as conn:
            dumps.append(
                {
                    t.name: sorted(map(tuple, conn.execute(select(t)).all()))
                    for t in domain.metadata.sorted_tables
                }
            )
        engine.dispose()
    assert dumps[0] == dumps[1]
    assert sum(len(v) for v in dumps[0].values()) >= 1000
    assert len(domain.metadata.tables) >= 8


def test_seeded_ids_stay_below_the_generated_range(session: Session) -> None:
    for table in domain.metadata.sorted_tables:
        pk = next(iter(table.primary_key.columns))
        for value in session.scalars(select(pk)):
            if isinstance(value, str) and re.fullmatch(r"[A-Z]{2}-\d+", value):
                assert int(value.split("-")[1]) < 90000, (table.name, value)


def test_policy_has_at_least_ten_numbered_rules() -> None:
    numbered = re.findall(r"^\d+\. \*\*", domain.policy, flags=re.MULTILINE)
    assert len(numbered) >= 10


def test_every_task_loads_and_its_actions_name_valid_tools() -> None:
    root = resources.files("env_server.domains.travel") / "tasks"
    files = sorted(p.name for p in root.iterdir() if p.name.endswith(".yaml"))
    assert files == sorted(f"{t.id}.yaml" for t in domain.tasks)
    for task in ACTION_TASKS:
        assert task.domain == "travel" and task.id.startswith("travel-")
        assert 2 <= len(task.user.script) <= 5, task.id
        for action in [*task.gold_actions, *task.wrong_actions]:
            assert action.name in domain.tools_by_name, (task.id, action.name)
            domain.tools_by_name[action.name].validate(action.arguments)
        writes = [a for a in task.gold_actions if domain.tools_by_name[a.name].kind == "write"]
        if not writes:
            assert task.wrong_actions and task.communicate, task.id
    splits = [t.split for t in ACTION_TASKS]
    assert splits.count("test") >= 25 and splits.count("train") >= 15


def test_train_and_test_tasks_use_different_passengers_and_reservations(session: Session) -> None:
    def entities(split: str) -> set[str]:
        found: set[str] = set()
        for task in (t for t in ACTION_TASKS if t.split == split):
            for action in [*task.gold_actions, *task.wrong_actions]:
                rid = action.arguments.get("reservation_id")
                if rid and (reservation := session.get(Reservation, rid)) is not None:
                    found |= {rid, reservation.holder_id}
                if "holder_id" in action.arguments:
                    found.add(action.arguments["holder_id"])
        return found

    train, test = entities("train"), entities("test")
    assert train and test
    assert not train & test


def test_canary_is_a_verification_free_write_no_task_touches(session: Session) -> None:
    canary = domain.canary_action
    assert canary is not None and domain.tools_by_name[canary.name].kind == "write"
    touched = {str(v) for t in ACTION_TASKS for a in t.gold_actions for v in a.arguments.values()}
    assert canary.arguments["flight_id"] not in touched
    call(session, canary.name, **canary.arguments)
    assert session.scalars(
        select(FlightAlert).where(FlightAlert.flight_id == canary.arguments["flight_id"])
    ).all()


def test_tools_are_typed_documented_and_marked() -> None:
    assert len(domain.tools) >= 15
    assert {t.kind for t in domain.tools} == {"read", "write"}
    for t in domain.tools:
        schema = t.openai_schema()
        assert set(schema) == {"type", "function"} and schema["function"]["description"]
        for name, prop in schema["function"]["parameters"].get("properties", {}).items():
            assert prop.get("description"), (t.name, name)


# ---------------------------------------------------------------- identity


def test_verify_records_a_check_and_returns_the_profile(session: Session) -> None:
    profile = verify(session, "PX-10001")
    assert profile["passenger_id"] == "PX-10001"
    assert count_rows(session, IdentityVerification) == 1


def test_verify_with_wrong_birth_date_is_refused_and_records_nothing(session: Session) -> None:
    p = session.get(Passenger, "PX-10001")
    assert p is not None
    with pytest.raises(ToolError, match="do not match"):
        call(
            session,
            "verify_passenger_identity",
            email=p.email,
            last_name=p.last_name,
            date_of_birth=(p.date_of_birth + timedelta(days=1)).isoformat(),
        )
    assert count_rows(session, IdentityVerification) == 0


def test_writes_need_the_holder_verified_not_someone_else(session: Session) -> None:
    r = upcoming(session, "FLEX")
    other = session.scalars(
        select(Passenger.passenger_id).where(Passenger.passenger_id != r.holder_id)
    ).first()
    assert other is not None
    with pytest.raises(ToolError, match="verif"):
        call(session, "cancel_reservation", reservation_id=r.reservation_id, refund_cents=0, reason="x")
    verify(session, other)
    with pytest.raises(ToolError, match="verif"):
        call(session, "cancel_reservation", reservation_id=r.reservation_id, refund_cents=0, reason="x")
    assert session.get(Reservation, r.reservation_id).status == "confirmed"  # type: ignore[union-attr]


# ---------------------------------------------------------------- flights


def test_search_flights_prices_every_fare_from_the_cabin_base(session: Session) -> None:
    options = call(session, "search_flights", origin="jfk", destination="LAX", date="2026-10-05")
    assert [o["flight_number"] for o in options] == ["GS101", "GS103"]
    fares = {f.code: f for f in session.scalars(select(FareClass))}
    for option in options:
        assert [f["fare_class"] for f in option["fares"]] == ["BASIC", "STANDARD", "FLEX", "BUSINESS"]
        for offer in option["fares"]:
            inv = session.get(SeatInventory, (option["flight_id"], offer["cabin"]))
            assert inv is not None
            assert offer["price_cents"] == fare_price_cents(
                inv.base_price_cents, fares[offer["fare_class"]].price_pct
            )


def test_flight_status_of_an_unknown_departure_is_refused(session: Session) -> None:
    assert (
        call(session, "get_flight_status", flight_number="gs 101", date="2026-10-05")["flight_number"]
        == "GS101"
    )
    with pytest.raises(ToolError, match="No flight GS999"):
        call(session, "get_flight_status", flight_number="GS999", date="2026-10-05")


def test_subscribe_alerts_normalises_the_contact_and_refuses_duplicates(session: Session) -> None:
    flight = session.scalars(
        select(Flight).where(Flight.status == "scheduled").order_by(Flight.flight_id)
    ).first()
    assert flight is not None
    sms = {"flight_id": flight.flight_id, "channel": "sms"}
    alert = call(session, "subscribe_flight_alerts", contact="+1 (415) 555-0182", **sms)
    assert alert["contact"] == "+14155550182"
    with pytest.raises(ToolError, match="already subscribed"):
        call(session, "subscribe_flight_alerts", contact="+1-415-555-0182", **sms)
    landed = session.scalars(select(Flight).where(Flight.status == "landed")).first()
    assert landed is not None
    with pytest.raises(ToolError, match="landed"):
        call(
            session,
            "subscribe_flight_alerts",
            flight_id=landed.flight_id,
            channel="email",
            contact="a@b.example",
        )
    assert session.scalars(select(FlightAlert).where(FlightAlert.contact == "+14155550182")).all()


# ---------------------------------------------------------------- changes


def test_change_flight_charges_fee_and_fare_difference_and_moves_seats(session: Session) -> None:
    r = upcoming(session, "STANDARD", min_hours=72, one_way=True)
    rid, seg = r.reservation_id, segments(session, r.reservation_id)[0]
    old = session.get(Flight, seg.flight_id)
    assert old is not None
    new = same_number_later(session, old, days=1)
    n = len(travelers(session, rid))
    new_inv = session.get(SeatInventory, (new.flight_id, "economy"))
    old_inv = session.get(SeatInventory, (old.flight_id, "economy"))
    assert new_inv is not None and old_inv is not None
    new_seats, old_seats = new_inv.seats_available, old_inv.seats_available
    new_price = fare_price_cents(new_inv.base_price_cents, 100)
    expected = (7500 + max(0, new_price - seg.fare_cents)) * n
    old_fare = seg.fare_cents
    card = card_of(session, r.holder_id)
    verify(session, r.holder_id)

    view = call(
        session,
        "change_flight",
        reservation_id=rid,
        current_flight_id=old.flight_id,
        new_flight_id=new.flight_id,
        payment_method_id=card,
    )

    assert view["segments"][0]["flight"]["flight_id"] == new.flight_id
    charge = session.scalars(
        select(Payment).where(Payment.reservation_id == rid, Payment.purpose == "change")
    ).one()
    assert (charge.amount_cents, charge.payment_method_id, charge.direction) == (expected, card, "charge")
    assert seg.fare_cents == max(old_fare, new_price)
    assert (new_inv.seats_available, old_inv.seats_available) == (new_seats - n, old_seats + n)


def test_change_flight_with_waiver_charges_nothing(session: Session) -> None:
    r = upcoming(session, "BASIC", min_hours=72, one_way=True)
    rid, seg = r.reservation_id, segments(session, r.reservation_id)[0]
    old = session.get(Flight, seg.flight_id)
    assert old is not None
    new = same_number_later(session, old, days=1)
    verify(session, r.holder_id)
    payments_before = count_rows(session, Payment)
    call(
        session,
        "change_flight",
        reservation_id=rid,
        current_flight_id=old.flight_id,
        new_flight_id=new.flight_id,
        waive_fees=True,
    )
    assert seg.flight_id == new.flight_id
    assert count_rows(session, Payment) == payments_before


def test_change_flight_to_another_route_or_without_payment_is_refused(session: Session) -> None:
    r = upcoming(session, "STANDARD", min_hours=72, one_way=True)
    rid, seg = r.reservation_id, segments(session, r.reservation_id)[0]
    old = session.get(Flight, seg.flight_id)
    assert old is not None
    other_route = session.scalars(
        select(Flight).where(
            Flight.origin != old.origin, Flight.status == "scheduled", Flight.departure_at > NOW
        )
    ).first()
    assert other_route is not None
    verify(session, r.holder_id)
    change = {"reservation_id": rid, "current_flight_id": old.flight_id}
    with pytest.raises(ToolError, match="keeps the route"):
        call(session, "change_flight", new_flight_id=other_route.flight_id, **change)
    later = same_number_later(session, old, days=1)
    with pytest.raises(ToolError, match="payment method is required"):
        call(session, "change_flight", new_flight_id=later.flight_id, **change)
    assert seg.flight_id == old.flight_id


def business_seats(session: Session, rid: str) -> list[int]:
    return [
        session.get(SeatInventory, (s.flight_id, "business")).seats_available  # type: ignore[union-attr]
        for s in segments(session, rid)
    ]


def test_upgrade_charges_the_business_difference_and_moves_seats(session: Session) -> None:
    r = upcoming(
        session,
        "FLEX",
        ok=lambda r: (
            min(business_seats(session, r.reservation_id)) >= len(travelers(session, r.reservation_id))
        ),
    )
    rid = r.reservation_id
    n = len(travelers(session, rid))
    seats = business_seats(session, rid)
    expected = 0
    for seg in segments(session, rid):
        inv = session.get(SeatInventory, (seg.flight_id, "business"))
        assert inv is not None
        expected += max(0, inv.base_price_cents - seg.fare_cents) * n
    card = card_of(session, r.holder_id)
    verify(session, r.holder_id)

    view = call(session, "upgrade_to_business", reservation_id=rid, payment_method_id=card)

    assert view["fare_class"] == "BUSINESS" and {s["cabin"] for s in view["segments"]} == {"business"}
    charge = session.scalars(
        select(Payment).where(Payment.reservation_id == rid, Payment.purpose == "upgrade")
    ).one()
    assert charge.amount_cents == expected
    assert business_seats(session, rid) == [s - n for s in seats]
    with pytest.raises(ToolError, match="already Business"):
        call(session, "upgrade_to_business", reservation_id=rid, payment_method_id=card)


def test_upgrade_into_a_full_business_cabin_is_refused(session: Session) -> None:
    r = upcoming(session, "STANDARD", ok=lambda r: min(business_seats(session, r.reservation_id)) == 0)
    verify(session, r.holder_id)
    with pytest.raises(ToolError, match="business seats left"):
        call(
            session,
            "upgrade_to_business",
            reservation_id=r.reservation_id,
            payment_method_id=card_of(session, r.holder_id),
        )
    assert r.fare_class == "STANDARD"
    assert {s.cabin for s in segments(session, r.reservation_id)} == {"economy"}


def test_update_traveler_corrects_details_but_never_duplicates_a_name(session: Session) -> None:
    r = upcoming(session, "STANDARD", n=2)
    rid = r.reservation_id
    first, second = travelers(session, rid)
    verify(session, r.holder_id)
    call(
        session,
        "update_traveler",
        reservation_id=rid,
        traveler_id=second.traveler_id,
        first_name="Evangeline",
        last_name=second.last_name,
        date_of_birth=second.date_of_birth.isoformat(),
    )
    assert second.first_name == "Evangeline"
    with pytest.raises(ToolError, match="already on reservation"):
        call(
            session,
            "update_traveler",
            reservation_id=rid,
            traveler_id=second.traveler_id,
            first_name=first.first_name,
            last_name=first.last_name,
            date_of_birth="2000-01-01",
        )
    assert len(travelers(session, rid)) == 2


def test_cancel_refunds_the_original_method_and_releases_seats(session: Session) -> None:
    r = upcoming(session, "FLEX")
    rid = r.reservation_id
    n = len(travelers(session, rid))
    ticket_value = sum(s.fare_cents for s in segments(session, rid)) * n
    fare_payment = session.scalars(
        select(Payment).where(Payment.reservation_id == rid, Payment.purpose == "fare")
    ).one()
    seats_before = [
        session.get(SeatInventory, (s.flight_id, "economy")).seats_available  # type: ignore[union-attr]
        for s in segments(session, rid)
    ]
    verify(session, r.holder_id)
    with pytest.raises(ToolError, match="between 0 and the ticket value"):
        call(session, "cancel_reservation", reservation_id=rid, refund_cents=ticket_value + 1, reason="x")

    view = call(
        session, "cancel_reservation", reservation_id=rid, refund_cents=ticket_value, reason="Plans changed"
    )

    assert view["status"] == "cancelled" and r.cancelled_at == NOW
    refund = session.scalars(
        select(Payment).where(Payment.reservation_id == rid, Payment.direction == "refund")
    ).one()
    assert (refund.amount_cents, refund.payment_method_id) == (ticket_value, fare_payment.payment_method_id)
    seats_after = [
        session.get(SeatInventory, (s.flight_id, "economy")).seats_available  # type: ignore[union-attr]
        for s in segments(session, rid)
    ]
    assert seats_after == [s + n for s in seats_before]
    with pytest.raises(ToolError, match="is cancelled"):
        call(session, "cancel_reservation", reservation_id=rid, refund_cents=0, reason="again")


def test_cancel_after_the_first_flight_left_is_refused(session: Session) -> None:
    flown = session.scalars(
        select(Reservation)
        .join(Segment, Segment.reservation_id == Reservation.reservation_id)
        .join(Flight, Flight.flight_id == Segment.flight_id)
        .where(Flight.status == "landed", Reservation.status == "confirmed")
    ).first()
    assert flown is not None
    verify(session, flown.holder_id)
    with pytest.raises(ToolError, match="can no longer be cancelled"):
        call(session, "cancel_reservation", reservation_id=flown.reservation_id, refund_cents=0, reason="x")
    assert flown.status == "confirmed"


# ---------------------------------------------------------------- bags


def test_add_checked_bags_records_the_fee_and_enforces_the_maximum(session: Session) -> None:
    r = upcoming(session, "BASIC")
    rid = r.reservation_id
    traveler = travelers(session, rid)[0]
    before = set(session.scalars(select(Baggage.bag_id).where(Baggage.traveler_id == traveler.traveler_id)))
    card = card_of(session, r.holder_id)
    verify(session, r.holder_id)
    bags = {"reservation_id": rid, "traveler_id": traveler.traveler_id}
    with pytest.raises(ToolError, match="fee_cents must be between"):
        call(session, "add_checked_bags", quantity=1, fee_cents=9000, payment_method_id=card, **bags)
    call(session, "add_checked_bags", quantity=3, fee_cents=15000, payment_method_id=card, **bags)
    (bag,) = session.scalars(
        select(Baggage).where(Baggage.traveler_id == traveler.traveler_id, Baggage.bag_id.not_in(before))
    )
    assert (bag.quantity, bag.fee_cents) == (3, 15000)
    paid = session.scalars(
        select(Payment).where(Payment.reservation_id == rid, Payment.purpose == "baggage")
    ).one()
    assert (paid.amount_cents, paid.payment_method_id) == (15000, card)
    with pytest.raises(ToolError, match="at most 4"):
        call(session, "add_checked_bags", quantity=2, fee_cents=0, **bags)


def test_a_voucher_must_cover_the_whole_amount(session: Session) -> None:
    r = upcoming(session, "STANDARD")
    rid = r.reservation_id
    traveler = travelers(session, rid)[0]
    verify(session, r.holder_id)
    voucher_id = call(
        session,
        "issue_compensation",
        reservation_id=rid,
        flight_id=segments(session, rid)[0].flight_id,
        amount_cents=5000,
    )["voucher_id"]
    bags = {"reservation_id": rid, "traveler_id": traveler.traveler_id, "quantity": 2}
    with pytest.raises(ToolError, match="must cover the whole amount"):
        call(session, "add_checked_bags", fee_cents=10000, payment_method_id=voucher_id, **bags)
    call(session, "add_checked_bags", fee_cents=5000, payment_method_id=voucher_id, **bags)
    voucher = session.get(PaymentMethod, voucher_id)
    assert voucher is not None and voucher.balance_cents == 0
    stranger = session.scalars(
        select(PaymentMethod.payment_method_id).where(PaymentMethod.passenger_id != r.holder_id)
    ).first()
    with pytest.raises(ToolError, match="does not belong"):
        call(
            session, "add_checked_bags", **{**bags, "quantity": 1}, fee_cents=5000, payment_method_id=stranger
        )


# ---------------------------------------------------------------- compensation and holds


def test_issue_compensation_pays_a_voucher_once_per_flight(session: Session) -> None:
    r = upcoming(session, "STANDARD")
    rid, flight_id = r.reservation_id, segments(session, r.reservation_id)[0].flight_id
    verify(session, r.holder_id)
    result = call(session, "issue_compensation", reservation_id=rid, flight_id=flight_id, amount_cents=30000)
    voucher = session.get(PaymentMethod, result["voucher_id"])
    assert voucher is not None
    assert (voucher.kind, voucher.balance_cents, voucher.passenger_id) == ("voucher", 30000, r.holder_id)
    assert voucher.expires_on == (NOW + timedelta(days=365)).date()
    with pytest.raises(ToolError, match="already compensated"):
        call(session, "issue_compensation", reservation_id=rid, flight_id=flight_id, amount_cents=100)
    assert count_rows(session, Compensation, reservation_id=rid) == 1


def test_compensation_for_a_flight_not_on_the_reservation_is_refused(session: Session) -> None:
    r = upcoming(session, "STANDARD")
    foreign = session.scalars(
        select(Flight.flight_id).where(
            Flight.flight_id.not_in([s.flight_id for s in segments(session, r.reservation_id)])
        )
    ).first()
    verify(session, r.holder_id)
    with pytest.raises(ToolError, match="not on reservation"):
        call(
            session,
            "issue_compensation",
            reservation_id=r.reservation_id,
            flight_id=foreign,
            amount_cents=10000,
        )


def test_supervisor_review_is_held_pending(session: Session) -> None:
    r = upcoming(session, "STANDARD")
    verify(session, r.holder_id)
    review = call(
        session,
        "request_supervisor_review",
        reservation_id=r.reservation_id,
        category="compensation",
        amount_cents=60000,
        summary="Three travellers, six-hour delay.",
    )
    stored = session.get(SupervisorReview, review["review_id"])
    assert stored is not None and (stored.status, stored.amount_cents) == ("pending", 60000)
    assert session.get(Reservation, r.reservation_id).status == "confirmed"  # type: ignore[union-attr]


# ---------------------------------------------------------------- loyalty


def _uncredited_landed_flight(session: Session) -> tuple[Reservation, Flight]:
    for r in session.scalars(
        select(Reservation).where(Reservation.status == "confirmed").order_by(Reservation.reservation_id)
    ):
        account = session.scalars(
            select(LoyaltyAccount).where(LoyaltyAccount.passenger_id == r.holder_id)
        ).first()
        if account is None:
            continue
        for f in flights_of(session, r.reservation_id):
            credited = session.scalars(
                select(MileageTransaction).where(
                    MileageTransaction.reservation_id == r.reservation_id,
                    MileageTransaction.flight_id == f.flight_id,
                )
            ).first()
            if f.status == "landed" and credited is None:
                return r, f
    raise LookupError("no uncredited flight")


def test_credit_missing_miles_adds_the_fare_rate_once(session: Session) -> None:
    r, f = _uncredited_landed_flight(session)
    account = session.scalars(select(LoyaltyAccount).where(LoyaltyAccount.passenger_id == r.holder_id)).one()
    fare = session.get(FareClass, r.fare_class)
    assert fare is not None
    balance = account.miles_balance
    verify(session, r.holder_id)
    txn = call(session, "credit_missing_miles", reservation_id=r.reservation_id, flight_id=f.flight_id)
    assert txn["miles"] == flight_miles(f.distance_miles, fare.miles_pct)
    assert account.miles_balance == balance + txn["miles"]
    with pytest.raises(ToolError, match="already credited"):
        call(session, "credit_missing_miles", reservation_id=r.reservation_id, flight_id=f.flight_id)


def test_miles_for_a_flight_not_yet_landed_are_refused(session: Session) -> None:
    r = next(
        r
        for r in session.scalars(select(Reservation).where(Reservation.status == "confirmed"))
        if session.scalars(select(LoyaltyAccount).where(LoyaltyAccount.passenger_id == r.holder_id)).first()
        and flights_of(session, r.reservation_id)[0].status == "scheduled"
    )
    verify(session, r.holder_id)
    with pytest.raises(ToolError, match="only once it has landed"):
        call(
            session,
            "credit_missing_miles",
            reservation_id=r.reservation_id,
            flight_id=segments(session, r.reservation_id)[0].flight_id,
        )


# ---------------------------------------------------------------- booking


def test_book_reservation_charges_todays_fares_and_sells_seats(session: Session) -> None:
    holder = session.get(Passenger, "PX-10001")
    assert holder is not None
    options = call(session, "search_flights", origin="SEA", destination="DEN", date="2026-10-08")
    back = call(session, "search_flights", origin="DEN", destination="SEA", date="2026-10-11")
    out_id, back_id = options[0]["flight_id"], back[0]["flight_id"]
    price = sum(
        next(f["price_cents"] for f in o["fares"] if f["fare_class"] == "STANDARD")
        for o in (options[0], back[0])
    )
    seats = session.get(SeatInventory, (out_id, "economy")).seats_available  # type: ignore[union-attr]
    people = [
        {
            "first_name": holder.first_name,
            "last_name": holder.last_name,
            "date_of_birth": holder.date_of_birth.isoformat(),
        },
        {"first_name": "Noor", "last_name": holder.last_name, "date_of_birth": "2015-02-03"},
    ]
    args = {
        "holder_id": "PX-10001",
        "flight_ids": [out_id, back_id],
        "fare_class": "STANDARD",
        "travelers": people,
        "payment_method_id": card_of(session, "PX-10001"),
    }
    with pytest.raises(ToolError, match="verif"):
        call(session, "book_reservation", **args)
    verify(session, "PX-10001")

    view = call(session, "book_reservation", **args)

    assert view["reservation_id"] == "RS-90001" and view["trip_type"] == "round_trip"
    assert view["ticket_value_cents"] == price * 2
    assert [t["passenger_id"] for t in view["travelers"]] == ["PX-10001", None]
    assert view["payments"][0]["amount_cents"] == price * 2
    assert session.get(SeatInventory, (out_id, "economy")).seats_available == seats - 2  # type: ignore[union-attr]
    with pytest.raises(ToolError, match="fly back"):
        call(session, "book_reservation", **{**args, "flight_ids": [out_id, out_id]})


def test_package_exports_only_the_domain() -> None:
    import env_server.domains.travel as travel
    import env_server.domains.travel.tools as tools

    assert travel.__all__ == ["domain"] and travel.domain.name == "travel"
    assert tools.__all__ == ["TOOLS"] and list(tools.TOOLS) == list(domain.tools)
