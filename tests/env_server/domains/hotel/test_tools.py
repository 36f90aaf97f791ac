"""Hotel tools run through the server's tool execution on a seeded in-memory sandbox.

Each test adds the guests and bookings it needs on top of the seed, calls tools as the server does (commit
on success, roll back on `ToolError`), and checks both the result and the database state.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from env_server.domain import ToolError, insert
from env_server.domains.hotel import domain
from env_server.domains.hotel.factories import card, invoice, room_charge
from env_server.domains.hotel.models import (
    ApprovalRequest,
    Booking,
    BookingExtra,
    BookingStatus,
    CorporateAccount,
    CorporateRole,
    Guest,
    IdentityVerification,
    LoyaltyTransaction,
    Payment,
    RoomNight,
    SupportTicket,
)
from env_server.errors import InvalidArgumentsError
from tests.domain_sandbox import count_rows, tool_caller

TODAY = domain.now.date()
call = tool_caller(domain)

#: The change most tests ask for: booking BK-00901 (10 to 12 October) moved one night later.
ONE_NIGHT_LATER = {"booking_id": "BK-00901", "check_in": "2026-10-11", "check_out": "2026-10-13"}


def add_guest(
    sandbox: Session,
    guest_id: str = "G-0901",
    account: str | None = None,
    role: CorporateRole | None = None,
) -> Guest:
    """A blue-tier guest with one card (PM-<digits of the guest>), born 1 May 1985, last name Tester."""
    guest = Guest(
        guest_id=guest_id,
        first_name="Tess",
        last_name="Tester",
        email=f"{guest_id.lower()}@test.example",
        phone="+4915550000",
        date_of_birth=date(1985, 5, 1),
        loyalty_tier="blue",
        loyalty_points=1000,
        corporate_account_id=account,
        corporate_role=role,
    )
    insert(sandbox, [guest, card(f"PM-{guest_id[2:]}", guest_id, "Visa", 4242)])
    sandbox.commit()
    return guest


def add_booking(
    sandbox: Session,
    guest: Guest,
    *,
    booking_id: str = "BK-00901",
    room_type_id: str = "RT-03-STD",
    check_in: date = date(2026, 10, 10),
    nights: int = 2,
    total: int = 40_000,
    status: BookingStatus = "confirmed",
    account: str | None = None,
    payment_method_id: str | None = None,
) -> Booking:
    """A flexible-rate booking for one adult, paid in full by the guest's card (or the given method)."""
    method = payment_method_id or f"PM-{guest.guest_id[2:]}"
    booking = Booking(
        booking_id=booking_id,
        guest_id=guest.guest_id,
        room_type_id=room_type_id,
        corporate_account_id=account,
        payment_method_id=method,
        check_in=check_in,
        check_out=check_in + timedelta(days=nights),
        adults=1,
        rate_plan="flexible",
        status=status,
        room_total_cents=total,
        created_at=datetime(2026, 9, 1, 12),
        cancelled_at=datetime(2026, 9, 2) if status == "cancelled" else None,
    )
    insert(sandbox, [booking, room_charge(f"PAY-{booking_id[3:]}", booking)])
    sandbox.commit()
    return booking


def add_account(sandbox: Session, discount_pct: int) -> None:
    """Corporate account CA-09 (Test Co) with its invoice payment method PM-0909."""
    insert(
        sandbox,
        [
            CorporateAccount(account_id="CA-09", company_name="Test Co", discount_pct=discount_pct),
            invoice("PM-0909", "CA-09", "Test Co"),
        ],
    )


def set_nights(
    sandbox: Session, room_type_id: str, first: date, rates: list[int], available: int = 3
) -> None:
    """Pin the rate and availability of consecutive nights, whatever the seed drew."""
    for i, rate in enumerate(rates):
        row = sandbox.get_one(RoomNight, (room_type_id, first + timedelta(days=i)))
        row.rate_cents, row.rooms_available = rate, available
    sandbox.commit()


def verify(sandbox: Session, guest: Guest) -> None:
    call(
        sandbox,
        "verify_guest_identity",
        guest_id=guest.guest_id,
        last_name="Tester",
        date_of_birth="1985-05-01",
    )


def payments_of(sandbox: Session, booking_id: str) -> list[tuple[str, str, int]]:
    rows = sandbox.scalars(
        select(Payment).where(Payment.booking_id == booking_id).order_by(Payment.payment_id)
    )
    return [(p.kind, p.purpose, p.amount_cents) for p in rows]


# --- identity ------------------------------------------------------------------------------------------


def test_find_guest_by_email_hides_date_of_birth(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    view = call(sandbox, "find_guest", email="G-0901@TEST.example")
    assert view["guest_id"] == guest.guest_id
    assert "date_of_birth" not in view
    with pytest.raises(ToolError, match=re.escape("nobody@nowhere.example")):
        call(sandbox, "find_guest", email="nobody@nowhere.example")


def test_verify_identity_rejects_wrong_details_and_records_right_ones(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    with pytest.raises(ToolError, match="do not match"):
        call(
            sandbox,
            "verify_guest_identity",
            guest_id="G-0901",
            last_name="Tester",
            date_of_birth="1985-05-02",
        )
    assert count_rows(sandbox, IdentityVerification) == 0
    result = call(
        sandbox, "verify_guest_identity", guest_id="G-0901", last_name=" tester ", date_of_birth="1985-05-01"
    )
    assert result == {"guest_id": guest.guest_id, "name": "Tess Tester", "verified": True}
    assert sandbox.scalars(select(IdentityVerification.guest_id)).all() == ["G-0901"]


def test_writes_refuse_an_unverified_caller(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest)
    with pytest.raises(ToolError, match="verify the identity of G-0901"):
        call(sandbox, "cancel_booking", booking_id="BK-00901", refund_percent=100, reason="x")
    with pytest.raises(ToolError, match="verify the identity of G-0901"):
        call(sandbox, "update_guest_contact", guest_id="G-0901", phone="+4915550123")
    assert sandbox.get_one(Booking, "BK-00901").status == "confirmed"


def test_verifying_someone_else_does_not_authorise_the_booking(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    other = add_guest(sandbox, "G-0902")
    add_booking(sandbox, guest)
    verify(sandbox, other)
    with pytest.raises(ToolError, match="verify the identity of G-0901 with"):
        call(sandbox, "change_booking_dates", charge_change_fee=False, **ONE_NIGHT_LATER)


# --- cancellation --------------------------------------------------------------------------------------


def test_cancel_refunds_the_given_share_and_releases_the_nights(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest, total=61_201)
    before = sandbox.get_one(RoomNight, ("RT-03-STD", date(2026, 10, 10))).rooms_available
    verify(sandbox, guest)
    view = call(sandbox, "cancel_booking", booking_id="BK-00901", refund_percent=50, reason="Plans changed")
    assert view["status"] == "cancelled"
    assert payments_of(sandbox, "BK-00901") == [
        ("charge", "room", 61_201),
        ("refund", "cancellation_refund", 30_600),
    ]
    assert sandbox.get_one(RoomNight, ("RT-03-STD", date(2026, 10, 10))).rooms_available == before + 1
    assert sandbox.get_one(Booking, "BK-00901").cancelled_at == domain.now


def test_cancel_without_refund_records_no_refund(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest)
    verify(sandbox, guest)
    call(sandbox, "cancel_booking", booking_id="BK-00901", refund_percent=0, reason="No-show expected")
    assert payments_of(sandbox, "BK-00901") == [("charge", "room", 40_000)]


@pytest.mark.parametrize("status", ["cancelled", "checked_out", "checked_in", "no_show"])
def test_only_confirmed_bookings_can_be_cancelled(sandbox: Session, status: BookingStatus) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest, status=status)
    verify(sandbox, guest)
    with pytest.raises(ToolError, match=f"is {status}"):
        call(sandbox, "cancel_booking", booking_id="BK-00901", refund_percent=100, reason="x")
    assert payments_of(sandbox, "BK-00901") == [("charge", "room", 40_000)]


def test_refund_percent_outside_the_policy_values_is_invalid() -> None:
    with pytest.raises(InvalidArgumentsError, match="refund_percent"):
        domain.tools_by_name["cancel_booking"].validate(
            {"booking_id": "BK-1", "refund_percent": 75, "reason": "x"}
        )


# --- changes -------------------------------------------------------------------------------------------


def test_change_dates_settles_the_difference_charges_the_fee_and_moves_inventory(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest, total=37_000)
    set_nights(sandbox, "RT-03-STD", date(2026, 10, 10), [18_500, 18_500, 19_000], available=3)
    verify(sandbox, guest)
    quote = call(sandbox, "quote_booking_change", **ONE_NIGHT_LATER)
    assert (quote["new_total_cents"], quote["difference_cents"]) == (37_500, 500)
    view = call(sandbox, "change_booking_dates", charge_change_fee=True, **ONE_NIGHT_LATER)
    assert (view["check_in"], view["check_out"], view["room_total_cents"]) == (
        "2026-10-11",
        "2026-10-13",
        37_500,
    )
    assert payments_of(sandbox, "BK-00901")[1:] == [
        ("charge", "price_difference", 500),
        ("charge", "change_fee", 5_000),
    ]
    available = [
        sandbox.get_one(RoomNight, ("RT-03-STD", date(2026, 10, d))).rooms_available for d in (10, 11, 12)
    ]
    assert available == [4, 3, 2]


def test_change_dates_refuses_a_sold_out_night_and_changes_nothing(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest)
    set_nights(sandbox, "RT-03-STD", date(2026, 10, 12), [18_000], available=0)
    verify(sandbox, guest)
    with pytest.raises(ToolError, match="sold out on the night of 2026-10-12"):
        call(sandbox, "change_booking_dates", charge_change_fee=False, **ONE_NIGHT_LATER)
    assert sandbox.get_one(Booking, "BK-00901").check_in == date(2026, 10, 10)
    assert payments_of(sandbox, "BK-00901") == [("charge", "room", 40_000)]


@pytest.mark.parametrize(
    ("check_in", "check_out", "refusal"),
    [("2026-09-30", "2026-10-02", "in the past"), ("2026-12-01", "2026-12-03", "not loaded")],
)
def test_change_dates_refuses_the_past_and_nights_without_rates(
    sandbox: Session, check_in: str, check_out: str, refusal: str
) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest)
    verify(sandbox, guest)
    with pytest.raises(ToolError, match=refusal):
        call(
            sandbox,
            "change_booking_dates",
            booking_id="BK-00901",
            check_in=check_in,
            check_out=check_out,
            charge_change_fee=False,
        )


def test_downgrade_refunds_the_difference_on_the_corporate_rate(sandbox: Session) -> None:
    add_account(sandbox, discount_pct=10)
    guest = add_guest(sandbox, account="CA-09", role="traveler")
    add_booking(
        sandbox, guest, room_type_id="RT-03-DLX", total=40_000, account="CA-09", payment_method_id="PM-0909"
    )
    set_nights(sandbox, "RT-03-STD", date(2026, 10, 10), [15_000, 15_001])
    verify(sandbox, guest)
    view = call(
        sandbox, "change_room_type", booking_id="BK-00901", room_type_id="RT-03-STD", charge_change_fee=False
    )
    assert view["room_total_cents"] == 27_000  # (15,000 + 15,001) less 10%, rounded down
    assert payments_of(sandbox, "BK-00901")[1:] == [("refund", "price_difference", 13_000)]
    assert sandbox.get_one(Payment, "PAY-90001").payment_method_id == "PM-0909"


@pytest.mark.parametrize(
    ("room_type_id", "refusal"), [("RT-04-STE", "another hotel"), ("RT-03-STD", "sleeps at most 2")]
)
def test_room_change_stays_at_the_hotel_and_within_occupancy(
    sandbox: Session, room_type_id: str, refusal: str
) -> None:
    guest = add_guest(sandbox)
    booking = add_booking(sandbox, guest, room_type_id="RT-03-STE")
    booking.adults = 4
    sandbox.commit()
    verify(sandbox, guest)
    with pytest.raises(ToolError, match=refusal):
        call(
            sandbox,
            "change_room_type",
            booking_id="BK-00901",
            room_type_id=room_type_id,
            charge_change_fee=False,
        )


# --- new bookings --------------------------------------------------------------------------------------


def test_coordinator_books_a_colleague_at_the_corporate_rate_on_the_invoice(sandbox: Session) -> None:
    add_account(sandbox, discount_pct=12)
    coordinator = add_guest(sandbox, "G-0901", account="CA-09", role="coordinator")
    add_guest(sandbox, "G-0902", account="CA-09", role="traveler")
    set_nights(sandbox, "RT-04-STD", date(2026, 10, 20), [42_000, 43_000, 43_000], available=1)
    verify(sandbox, coordinator)
    offers = call(
        sandbox,
        "search_availability",
        hotel_id="H-04",
        check_in="2026-10-20",
        check_out="2026-10-23",
        corporate_account_id="CA-09",
    )
    assert next(o for o in offers if o["room_type_id"] == "RT-04-STD")["total_cents"] == 112_640
    view = call(
        sandbox,
        "create_booking",
        guest_id="G-0902",
        room_type_id="RT-04-STD",
        check_in="2026-10-20",
        check_out="2026-10-23",
        adults=1,
        rate_plan="flexible",
        payment_method_id="PM-0909",
        corporate_account_id="CA-09",
    )
    assert (view["booking_id"], view["room_total_cents"], view["guest_id"]) == ("BK-90001", 112_640, "G-0902")
    assert payments_of(sandbox, "BK-90001") == [("charge", "room", 112_640)]
    assert sandbox.get_one(RoomNight, ("RT-04-STD", date(2026, 10, 21))).rooms_available == 0


def test_create_booking_refuses_someone_elses_card_and_too_many_adults(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_guest(sandbox, "G-0902")
    verify(sandbox, guest)
    args = dict(
        guest_id="G-0901",
        room_type_id="RT-03-STD",
        check_in="2026-10-20",
        check_out="2026-10-22",
        rate_plan="non_refundable",
    )
    with pytest.raises(ToolError, match="not a card of guest G-0901"):
        call(sandbox, "create_booking", adults=1, payment_method_id="PM-0902", **args)
    with pytest.raises(ToolError, match="sleeps 1 to 2 adults, not 3"):
        call(sandbox, "create_booking", adults=3, payment_method_id="PM-0901", **args)
    assert count_rows(sandbox, Booking, guest_id="G-0901") == 0


def test_non_refundable_booking_is_ten_percent_cheaper(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    set_nights(sandbox, "RT-02-STD", date(2026, 10, 18), [25_000, 24_000], available=6)
    verify(sandbox, guest)
    view = call(
        sandbox,
        "create_booking",
        guest_id="G-0901",
        room_type_id="RT-02-STD",
        check_in="2026-10-18",
        check_out="2026-10-20",
        adults=2,
        rate_plan="non_refundable",
        payment_method_id="PM-0901",
    )
    assert (view["rate_plan"], view["room_total_cents"]) == ("non_refundable", 44_100)


# --- extras --------------------------------------------------------------------------------------------


def test_extras_are_priced_per_adult_and_night_or_waived(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    booking = add_booking(sandbox, guest, nights=3)
    booking.adults = 2
    sandbox.commit()
    verify(sandbox, guest)
    call(sandbox, "add_booking_extra", booking_id="BK-00901", extra="breakfast", complimentary=False)
    call(sandbox, "add_booking_extra", booking_id="BK-00901", extra="parking", complimentary=False)
    view = call(
        sandbox, "add_booking_extra", booking_id="BK-00901", extra="late_checkout", complimentary=True
    )
    assert view["extras"] == [
        {"extra": "breakfast", "price_cents": 15_000, "complimentary": False},
        {"extra": "late_checkout", "price_cents": 0, "complimentary": True},
        {"extra": "parking", "price_cents": 6_000, "complimentary": False},
    ]
    with pytest.raises(ToolError, match="already has parking"):
        call(sandbox, "add_booking_extra", booking_id="BK-00901", extra="parking", complimentary=False)
    assert count_rows(sandbox, BookingExtra, booking_id="BK-00901") == 3
    assert payments_of(sandbox, "BK-00901") == [("charge", "room", 40_000)]  # extras are billed at check-out


def test_extras_can_be_added_in_house_but_not_after_check_out(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(
        sandbox, guest, booking_id="BK-00901", status="checked_in", check_in=TODAY - timedelta(days=1)
    )
    add_booking(sandbox, guest, booking_id="BK-00902", status="checked_out", check_in=date(2026, 9, 20))
    verify(sandbox, guest)
    call(sandbox, "add_booking_extra", booking_id="BK-00901", extra="late_checkout", complimentary=False)
    with pytest.raises(ToolError, match="is checked_out"):
        call(sandbox, "add_booking_extra", booking_id="BK-00902", extra="late_checkout", complimentary=False)


# --- corporate approvals -------------------------------------------------------------------------------


def _corporate_booking(sandbox: Session) -> tuple[Guest, Guest]:
    add_account(sandbox, discount_pct=18)
    coordinator = add_guest(sandbox, "G-0901", account="CA-09", role="coordinator")
    traveler = add_guest(sandbox, "G-0902", account="CA-09", role="traveler")
    add_booking(
        sandbox,
        traveler,
        booking_id="BK-00902",
        room_type_id="RT-04-DLX",
        total=145_000,
        account="CA-09",
        payment_method_id="PM-0909",
    )
    return coordinator, traveler


def test_approval_request_records_the_change_and_leaves_booking_and_payment_alone(sandbox: Session) -> None:
    coordinator, _ = _corporate_booking(sandbox)
    verify(sandbox, coordinator)
    view = call(
        sandbox,
        "create_approval_request",
        booking_id="BK-00902",
        requested_by_guest_id="G-0901",
        change_type="change_room_type",
        new_room_type_id="RT-04-STD",
        note="Cheaper room",
    )
    assert (view["approval_id"], view["status"], view["new_room_type_id"]) == (
        "APR-90001",
        "pending",
        "RT-04-STD",
    )
    booking = sandbox.get_one(Booking, "BK-00902")
    assert (booking.room_type_id, booking.room_total_cents, booking.status) == (
        "RT-04-DLX",
        145_000,
        "confirmed",
    )
    assert payments_of(sandbox, "BK-00902") == [("charge", "room", 145_000)]
    with pytest.raises(ToolError, match="already has a pending approval request \\(APR-90001\\)"):
        call(
            sandbox,
            "create_approval_request",
            booking_id="BK-00902",
            requested_by_guest_id="G-0901",
            change_type="cancel",
        )


def test_approval_request_checks_requester_and_details(sandbox: Session) -> None:
    _, traveler = _corporate_booking(sandbox)
    outsider = add_guest(sandbox, "G-0903")
    verify(sandbox, outsider)
    by_outsider = {"booking_id": "BK-00902", "requested_by_guest_id": "G-0903"}
    by_traveler = {"booking_id": "BK-00902", "requested_by_guest_id": "G-0902"}
    with pytest.raises(ToolError, match="may not act on booking BK-00902"):
        call(sandbox, "create_approval_request", change_type="cancel", **by_outsider)
    with pytest.raises(ToolError, match="verify the identity of G-0902"):
        call(sandbox, "create_approval_request", change_type="cancel", **by_traveler)
    verify(sandbox, traveler)
    with pytest.raises(ToolError, match="needs new_check_in and new_check_out"):
        call(
            sandbox,
            "create_approval_request",
            change_type="change_dates",
            new_check_in="2026-10-12",
            **by_traveler,
        )
    with pytest.raises(ToolError, match="takes no new dates"):
        call(
            sandbox,
            "create_approval_request",
            change_type="cancel",
            new_room_type_id="RT-04-STD",
            **by_traveler,
        )
    assert count_rows(sandbox, ApprovalRequest, booking_id="BK-00902") == 0
    call(
        sandbox,
        "create_approval_request",
        change_type="change_dates",
        new_check_in="2026-10-12",
        new_check_out="2026-10-14",
        **by_traveler,
    )
    assert sandbox.get_one(ApprovalRequest, "APR-90001").new_check_out == date(2026, 10, 14)


def test_coordinator_may_change_a_colleagues_booking(sandbox: Session) -> None:
    coordinator, _ = _corporate_booking(sandbox)
    verify(sandbox, coordinator)
    call(sandbox, "cancel_booking", booking_id="BK-00902", refund_percent=100, reason="Trip off")
    assert payments_of(sandbox, "BK-00902")[-1] == ("refund", "cancellation_refund", 145_000)


# --- service recovery and contact details --------------------------------------------------------------


def test_ticket_needs_no_verification_but_points_do(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_booking(sandbox, guest, status="checked_in", check_in=TODAY - timedelta(days=1))
    ticket = call(
        sandbox,
        "open_support_ticket",
        guest_id="G-0901",
        category="noise",
        summary="Loud party",
        booking_id="BK-00901",
    )
    assert (ticket["ticket_id"], ticket["status"]) == ("TK-90001", "open")
    with pytest.raises(ToolError, match="verify the identity of G-0901"):
        call(sandbox, "award_goodwill_points", ticket_id="TK-90001", points=1000)
    verify(sandbox, guest)
    award = call(sandbox, "award_goodwill_points", ticket_id="TK-90001", points=1000)
    assert award["new_balance"] == 2000
    assert sandbox.get_one(Guest, "G-0901").loyalty_points == 2000
    txn = sandbox.get_one(LoyaltyTransaction, "LT-90001")
    assert (txn.kind, txn.points, txn.ticket_id, txn.booking_id) == ("goodwill", 1000, "TK-90001", "BK-00901")
    assert call(sandbox, "get_booking", booking_id="BK-00901")["goodwill_points_awarded"] == 1000


def test_ticket_refuses_a_booking_of_another_guest(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    other = add_guest(sandbox, "G-0902")
    add_booking(sandbox, other)
    with pytest.raises(ToolError, match="not a stay of guest G-0901"):
        call(
            sandbox,
            "open_support_ticket",
            guest_id=guest.guest_id,
            category="other",
            summary="x",
            booking_id="BK-00901",
        )
    assert count_rows(sandbox, SupportTicket, guest_id="G-0901") == 0


def test_contact_update_normalises_phone_and_refuses_a_taken_email(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    add_guest(sandbox, "G-0902")
    verify(sandbox, guest)
    with pytest.raises(ToolError, match="belongs to another profile"):
        call(sandbox, "update_guest_contact", guest_id="G-0901", email="G-0902@test.example")
    view = call(
        sandbox, "update_guest_contact", guest_id="G-0901", email="New@Test.example", phone="+34 600 123 456"
    )
    assert (view["email"], view["phone"]) == ("new@test.example", "+34600123456")
    with pytest.raises(ToolError, match="not an international phone number"):
        call(sandbox, "update_guest_contact", guest_id="G-0901", phone="0171 555")


# --- reads, schema, canary -----------------------------------------------------------------------------


def test_search_hotels_lists_the_city_or_names_the_known_cities(sandbox: Session) -> None:
    hotels = call(sandbox, "search_hotels", city="berlin")
    assert [(h["hotel_id"], h["tier"]) for h in hotels] == [("H-03", "standard"), ("H-04", "luxury")]
    assert len(hotels[0]["room_types"]) == 3
    with pytest.raises(ToolError, match="Berlin, Chicago, Kyoto, Lisbon"):
        call(sandbox, "search_hotels", city="Paris")


def test_unknown_ids_are_refused_by_name(sandbox: Session) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_booking", {"booking_id": "BK-404"}),
        ("get_guest", {"guest_id": "G-404"}),
        ("get_hotel", {"hotel_id": "H-404"}),
        ("get_corporate_account", {"account_id": "CA-404"}),
        ("award_goodwill_points", {"ticket_id": "TK-404", "points": 10}),
    ]
    for name, args in calls:
        with pytest.raises(ToolError, match="404 not found"):
            call(sandbox, name, **args)


def test_check_constraints_reject_invalid_rows(sandbox: Session) -> None:
    guest = add_guest(sandbox)
    booking = add_booking(sandbox, guest)
    booking.status = cast(BookingStatus, "teleported")  # a value the type forbids, as raw SQL could write
    with pytest.raises(IntegrityError):
        sandbox.commit()
    sandbox.rollback()
    sandbox.add(
        Payment(
            payment_id="PAY-00999",
            booking_id="BK-00901",
            payment_method_id="PM-0901",
            kind="refund",
            purpose="room",
            amount_cents=100,
            created_at=domain.now,
        )
    )
    with pytest.raises(IntegrityError):
        sandbox.commit()


def test_canary_action_writes_without_verification(sandbox: Session) -> None:
    assert domain.canary_action is not None
    count = select(func.count()).select_from(SupportTicket)
    before = sandbox.scalars(count).one()
    call(sandbox, domain.canary_action.name, **domain.canary_action.arguments)
    assert sandbox.scalars(count).one() == before + 1
    assert "support_tickets" not in {t for t, cols in domain.volatile_columns.items() if "*" in cols}
