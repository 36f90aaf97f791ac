"""Insurance tools run through the server's tool execution on a seeded in-memory sandbox.

Each test adds the customer and policy it needs on top of the seed (ids below the seeded ranges, so no
seeded row interferes), calls tools as the server does (commit on success, roll back on `ToolError`), and
checks both the result and the database state, refusals included.
"""

from __future__ import annotations

from datetime import date
from typing import Any, cast

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from env_server.domain import ToolError, insert
from env_server.domains.insurance import domain
from env_server.domains.insurance.factories import (
    BillingAccountSpec,
    CustomerSpec,
    PolicySpec,
    VehicleSpec,
    driver,
)
from env_server.domains.insurance.models import (
    BillingAccount,
    Claim,
    Customer,
    Document,
    Driver,
    IdentityVerification,
    InstalmentPlan,
    Payment,
    Policy,
    SupportTicket,
    Vehicle,
)
from env_server.domains.insurance.rating import vehicle_premium_cents
from env_server.errors import InvalidArgumentsError
from tests.domain_sandbox import count_rows, sandbox_fixture, tool_caller

TODAY = domain.now.date()
DOB = date(1980, 6, 15)
ZIP = "60614"
#: A child of the holder of POL-00001, as `add_driver` takes them (name, birth date and licence to add).
CHILD = {"policy_id": "POL-00001", "last_name": "Holder1", "license_state": "IL", "relationship": "child"}

sandbox = sandbox_fixture(domain)
call = tool_caller(domain)


def make_policy(
    sandbox: Session,
    n: int = 1,
    *,
    state: str = "IL",
    status: str = "active",
    past_due_cents: int = 0,
    collision: int | None = 50_000,
    comprehensive: int | None = 50_000,
    full_glass: bool = False,
    vehicles: int = 1,
) -> Policy:
    """A customer CU-0000n with policy POL-0000n, `vehicles` commute cars, a named insured and billing."""
    customer = CustomerSpec(
        customer_id=f"CU-0000{n}",
        first_name="Test",
        last_name=f"Holder{n}",
        email=f"holder{n}@example.test",
        phone="312-555-0100",
        date_of_birth=DOB,
        street="1 Main St",
        city="Chicago",
        state=state,
        zip_code=ZIP,
        customer_since=date(2020, 1, 1),
    )
    premium = vehicle_premium_cents("commute", "50/100/50", collision, comprehensive, full_glass)
    policy = PolicySpec(
        policy_id=f"POL-0000{n}",
        customer_id=customer.customer_id,
        state=state,
        status=status,
        term_start=date(2026, 3, 1),
        term_end=date(2027, 3, 1),
        monthly_premium_cents=premium * vehicles,
        liability_limits="50/100/50",
        collision_deductible_cents=collision,
        comprehensive_deductible_cents=comprehensive,
        full_glass=full_glass,
        grace_ends_on=date(2026, 10, 10) if status == "grace" else None,
        lapsed_on=date(2026, 9, 20) if status == "lapsed" else None,
        cancelled_on=date(2026, 9, 1) if status == "cancelled" else None,
        cancellation_reason="cost" if status == "cancelled" else None,
    )
    cars = [
        VehicleSpec(
            vehicle_id=f"VEH-0000{n}{i}",
            policy_id=policy.policy_id,
            vin=f"1HGCM8263{n}A00435{i}",
            year=2020,
            make="Honda",
            model="Accord",
            usage="commute",
            ownership="owned",
            lienholder=None,
            monthly_premium_cents=premium,
            status="active",
            added_on=date(2026, 3, 1),
            removed_on=None,
        )
        for i in range(vehicles)
    ]
    holder = driver(
        f"DRV-0000{n}",
        policy.policy_id,
        state,
        f"IL00000000{n}",
        first="Test",
        last=f"Holder{n}",
        born=DOB,
        relationship="named_insured",
        on=date(2026, 3, 1),
    )
    billing = BillingAccountSpec(
        billing_account_id=f"BA-0000{n}",
        policy_id=policy.policy_id,
        payment_method="card",
        payment_last4="4242",
        autopay=False,
        past_due_cents=past_due_cents,
        next_due_date=date(2026, 10, 15),
    )
    row = insert(sandbox, [customer, policy, *cars, holder, billing])[1]
    sandbox.commit()
    return cast(Policy, row)


def verify(sandbox: Session, n: int = 1) -> None:
    call(
        sandbox,
        "verify_customer_identity",
        customer_id=f"CU-0000{n}",
        date_of_birth=DOB.isoformat(),
        zip_code=ZIP,
    )


# --- identity -------------------------------------------------------------------------------------------


def test_find_customer_by_email_or_phone_and_profile_hides_identity_factors(sandbox: Session) -> None:
    make_policy(sandbox)
    by_email = call(sandbox, "find_customer", email="HOLDER1@example.test")
    by_phone = call(sandbox, "find_customer", phone="(312) 555 0100")
    assert [c["customer_id"] for c in by_email] == ["CU-00001"]
    assert "CU-00001" in [c["customer_id"] for c in by_phone]
    assert by_email[0]["policy_ids"] == ["POL-00001"]
    assert "date_of_birth" not in by_email[0] and "zip_code" not in by_email[0]
    with pytest.raises(ToolError, match="email address or a phone number"):
        call(sandbox, "find_customer")


def test_verify_identity_records_a_verification(sandbox: Session) -> None:
    make_policy(sandbox)
    result = call(
        sandbox, "verify_customer_identity", customer_id="CU-00001", date_of_birth="1980-06-15", zip_code=ZIP
    )
    assert result == {"verification_id": "IDV-90001", "customer_id": "CU-00001", "verified": True}
    row = sandbox.get(IdentityVerification, "IDV-90001")
    assert row is not None and row.customer_id == "CU-00001" and row.verified_at == domain.now


@pytest.mark.parametrize(("date_of_birth", "zip_code"), [("1980-06-16", ZIP), ("1980-06-15", "60615")])
def test_verify_identity_with_a_wrong_detail_is_refused_and_records_nothing(
    sandbox: Session, date_of_birth: str, zip_code: str
) -> None:
    make_policy(sandbox)
    with pytest.raises(ToolError, match="could not be verified"):
        call(
            sandbox,
            "verify_customer_identity",
            customer_id="CU-00001",
            date_of_birth=date_of_birth,
            zip_code=zip_code,
        )
    assert count_rows(sandbox, IdentityVerification, customer_id="CU-00001") == 0


def test_every_write_but_tickets_requires_verification(sandbox: Session) -> None:
    make_policy(sandbox, past_due_cents=5_000)
    with pytest.raises(ToolError, match="has not been verified"):
        call(sandbox, "make_payment", policy_id="POL-00001", amount_cents=5_000)
    with pytest.raises(ToolError, match="has not been verified"):
        call(sandbox, "update_contact_details", customer_id="CU-00001", phone="312-555-0199")
    assert sandbox.get(BillingAccount, "BA-00001").past_due_cents == 5_000  # type: ignore[union-attr]
    ticket = call(
        sandbox,
        "create_support_ticket",
        customer_id="CU-00001",
        category="general",
        priority="low",
        subject="Question",
        description="Asked about roadside assistance.",
    )
    assert ticket["ticket_id"] == "TCK-90001" and ticket["status"] == "open"


def test_verifying_one_customer_does_not_unlock_another_customers_policy(sandbox: Session) -> None:
    make_policy(sandbox, 1)
    make_policy(sandbox, 2, past_due_cents=5_000)
    verify(sandbox, 1)
    with pytest.raises(ToolError, match="CU-00002 has not been verified"):
        call(sandbox, "make_payment", policy_id="POL-00002", amount_cents=5_000)


# --- billing --------------------------------------------------------------------------------------------


def test_instalment_plan_moves_the_past_due_amount_and_ends_the_grace_period(sandbox: Session) -> None:
    make_policy(sandbox, status="grace", past_due_cents=31_000)
    verify(sandbox)
    view = call(sandbox, "create_instalment_plan", policy_id="POL-00001", instalment_count=3)
    assert view["past_due_cents"] == 0 and view["policy_status"] == "active"
    assert view["instalment_plans"] == [
        {
            "plan_id": "IP-90001",
            "total_cents": 31_000,
            "instalment_count": 3,
            "instalment_cents": 10_334,
            "first_due_date": "2026-10-15",
            "status": "active",
            "created_on": "2026-10-01",
        }
    ]
    policy = sandbox.get(Policy, "POL-00001")
    assert policy is not None and policy.status == "active" and policy.grace_ends_on is None


@pytest.mark.parametrize("count", [1, 7])
def test_instalment_plan_outside_two_to_six_instalments_is_refused(sandbox: Session, count: int) -> None:
    make_policy(sandbox, status="grace", past_due_cents=31_000)
    verify(sandbox)
    with pytest.raises(ToolError, match="2 to 6 instalments"):
        call(sandbox, "create_instalment_plan", policy_id="POL-00001", instalment_count=count)
    assert count_rows(sandbox, InstalmentPlan, billing_account_id="BA-00001") == 0


def test_instalment_plan_needs_a_past_due_amount_and_no_active_plan(sandbox: Session) -> None:
    make_policy(sandbox, 1)
    make_policy(sandbox, 2, past_due_cents=20_000)
    verify(sandbox, 1)
    verify(sandbox, 2)
    with pytest.raises(ToolError, match="nothing past due"):
        call(sandbox, "create_instalment_plan", policy_id="POL-00001", instalment_count=2)
    call(sandbox, "create_instalment_plan", policy_id="POL-00002", instalment_count=2)
    sandbox.get(BillingAccount, "BA-00002").past_due_cents = 9_000  # type: ignore[union-attr]
    sandbox.commit()
    with pytest.raises(ToolError, match="already has an active instalment plan"):
        call(sandbox, "create_instalment_plan", policy_id="POL-00002", instalment_count=2)


def test_partial_payment_keeps_grace_and_full_payment_restores_active(sandbox: Session) -> None:
    make_policy(sandbox, status="grace", past_due_cents=20_000)
    verify(sandbox)
    view = call(sandbox, "make_payment", policy_id="POL-00001", amount_cents=12_000)
    assert view["past_due_cents"] == 8_000 and view["policy_status"] == "grace"
    with pytest.raises(ToolError, match="between 1 and the past-due amount"):
        call(sandbox, "make_payment", policy_id="POL-00001", amount_cents=8_001)
    view = call(sandbox, "make_payment", policy_id="POL-00001", amount_cents=8_000)
    assert view["policy_status"] == "active"
    assert [p["amount_cents"] for p in view["payments"]] == [8_000, 12_000]
    payments = sandbox.scalars(select(Payment).where(Payment.billing_account_id == "BA-00001")).all()
    assert {(p.amount_cents, p.paid_on, p.method) for p in payments} == {
        (12_000, TODAY, "card"),
        (8_000, TODAY, "card"),
    }


def test_reinstatement_needs_a_lapsed_policy_with_nothing_past_due(sandbox: Session) -> None:
    make_policy(sandbox, status="lapsed", past_due_cents=22_200)
    verify(sandbox)
    with pytest.raises(ToolError, match="collect it before reinstating"):
        call(sandbox, "reinstate_policy", policy_id="POL-00001")
    call(sandbox, "make_payment", policy_id="POL-00001", amount_cents=22_200)
    assert sandbox.get(Policy, "POL-00001").status == "lapsed"  # type: ignore[union-attr]
    view = call(sandbox, "reinstate_policy", policy_id="POL-00001")
    assert view["status"] == "active" and view["lapsed_on"] is None
    with pytest.raises(ToolError, match="only a lapsed policy"):
        call(sandbox, "reinstate_policy", policy_id="POL-00001")


def test_set_autopay_switches_it_and_refuses_a_no_op(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    assert call(sandbox, "set_autopay", policy_id="POL-00001", enabled=True)["autopay"] is True
    assert sandbox.get(BillingAccount, "BA-00001").autopay is True  # type: ignore[union-attr]
    with pytest.raises(ToolError, match="already on"):
        call(sandbox, "set_autopay", policy_id="POL-00001", enabled=True)


# --- vehicles and drivers -------------------------------------------------------------------------------


def test_add_vehicle_rates_it_and_raises_the_policy_premium(sandbox: Session) -> None:
    policy = make_policy(sandbox)
    before = policy.monthly_premium_cents
    verify(sandbox)
    view = call(
        sandbox,
        "add_vehicle",
        policy_id="POL-00001",
        vin="4t1daack5su123456",
        year=2025,
        make="Toyota",
        model="Camry",
        usage="business",
        ownership="financed",
        lienholder="Toyota Financial Services",
    )
    added = sandbox.get(Vehicle, "VEH-90001")
    assert added is not None and added.vin == "4T1DAACK5SU123456" and added.added_on == TODAY
    assert added.monthly_premium_cents == vehicle_premium_cents(
        "business", "50/100/50", 50_000, 50_000, False
    )
    assert view["monthly_premium_cents"] == before + added.monthly_premium_cents
    assert sandbox.get(Policy, "POL-00001").monthly_premium_cents == before + added.monthly_premium_cents  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"vin": "1HGCM82633A00435O", "ownership": "owned"}, "not a valid VIN"),
        ({"vin": "4T1DAACK5SU123456", "ownership": "financed"}, "Give a lienholder"),
        ({"vin": "1HGCM82631A004350", "ownership": "owned"}, "already insured"),
    ],
)
def test_add_vehicle_refusals(sandbox: Session, args: dict[str, str], message: str) -> None:
    make_policy(sandbox)
    verify(sandbox)
    with pytest.raises(ToolError, match=message):
        call(
            sandbox,
            "add_vehicle",
            policy_id="POL-00001",
            year=2024,
            make="Honda",
            model="Civic",
            usage="pleasure",
            **args,
        )
    assert sandbox.get(Vehicle, "VEH-90001") is None


def test_remove_vehicle_lowers_the_premium_but_never_removes_the_last_one(sandbox: Session) -> None:
    policy = make_policy(sandbox, vehicles=2)
    premium = policy.monthly_premium_cents
    verify(sandbox)
    view = call(sandbox, "remove_vehicle", policy_id="POL-00001", vehicle_id="VEH-000010")
    assert view["monthly_premium_cents"] == premium // 2
    removed = sandbox.get(Vehicle, "VEH-000010")
    assert removed is not None and removed.status == "removed" and removed.removed_on == TODAY
    with pytest.raises(ToolError, match="only vehicle"):
        call(sandbox, "remove_vehicle", policy_id="POL-00001", vehicle_id="VEH-000011")
    with pytest.raises(ToolError, match="already removed"):
        call(sandbox, "remove_vehicle", policy_id="POL-00001", vehicle_id="VEH-000010")
    assert sandbox.get(Vehicle, "VEH-000011").status == "active"  # type: ignore[union-attr]


def test_add_driver_as_listed_or_excluded(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    call(sandbox, "add_driver", first_name="Ann", date_of_birth="2001-02-03", license_number="il1", **CHILD)
    call(
        sandbox,
        "add_driver",
        first_name="Bo",
        date_of_birth="2003-02-03",
        license_number="IL2",
        excluded=True,
        **CHILD,
    )
    ann, bo = sandbox.get(Driver, "DRV-90001"), sandbox.get(Driver, "DRV-90002")
    assert ann is not None and (ann.status, ann.license_number, ann.excluded_on) == ("listed", "IL1", None)
    assert bo is not None and (bo.status, bo.excluded_on) == ("excluded", TODAY)


@pytest.mark.parametrize(
    ("driver", "refusal"),
    [
        ({"date_of_birth": "2010-10-02", "license_number": "IL9", "relationship": "child"}, "under 16"),
        (
            {"date_of_birth": "1990-01-01", "license_number": "IL000000001", "relationship": "spouse"},
            "already on policy",
        ),
    ],
)
def test_add_driver_refuses_someone_under_sixteen_or_a_duplicate_licence(
    sandbox: Session, driver: dict[str, str], refusal: str
) -> None:
    make_policy(sandbox)
    verify(sandbox)
    common = {"policy_id": "POL-00001", "first_name": "Cy", "last_name": "Holder1", "license_state": "IL"}
    with pytest.raises(ToolError, match=refusal):
        call(sandbox, "add_driver", **driver, **common)
    assert sandbox.get(Driver, "DRV-90001") is None


def test_exclude_and_remove_drivers_but_never_the_named_insured(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    call(sandbox, "add_driver", first_name="Ann", date_of_birth="2001-02-03", license_number="IL1", **CHILD)
    view = call(sandbox, "exclude_driver", policy_id="POL-00001", driver_id="DRV-90001")
    assert [d["status"] for d in view["drivers"]] == ["listed", "excluded"]
    with pytest.raises(ToolError, match="only a listed driver"):
        call(sandbox, "exclude_driver", policy_id="POL-00001", driver_id="DRV-90001")
    call(sandbox, "remove_driver", policy_id="POL-00001", driver_id="DRV-90001")
    ann = sandbox.get(Driver, "DRV-90001")
    assert ann is not None and (ann.status, ann.excluded_on, ann.removed_on) == ("removed", TODAY, TODAY)
    for tool in ("exclude_driver", "remove_driver"):
        with pytest.raises(ToolError, match="named insured"):
            call(sandbox, tool, policy_id="POL-00001", driver_id="DRV-00001")
    with pytest.raises(ToolError, match="not found on policy"):
        call(sandbox, "remove_driver", policy_id="POL-00001", driver_id="DRV-40001")


def test_a_cancelled_policy_cannot_be_changed(sandbox: Session) -> None:
    make_policy(sandbox, status="cancelled")
    verify(sandbox)
    with pytest.raises(ToolError, match="is cancelled"):
        call(
            sandbox,
            "add_driver",
            policy_id="POL-00001",
            first_name="Ann",
            last_name="X",
            date_of_birth="2001-02-03",
            license_number="IL1",
            license_state="IL",
            relationship="spouse",
        )
    assert sandbox.get(Driver, "DRV-90001") is None


# --- policy ---------------------------------------------------------------------------------------------


def test_change_deductible_reprices_every_active_vehicle(sandbox: Session) -> None:
    make_policy(sandbox, vehicles=2, collision=25_000)
    verify(sandbox)
    view = call(
        sandbox, "change_deductible", policy_id="POL-00001", coverage="collision", deductible_cents=100_000
    )
    each = vehicle_premium_cents("commute", "50/100/50", 100_000, 50_000, False)
    assert view["collision_deductible_cents"] == 100_000 and view["monthly_premium_cents"] == 2 * each
    assert [
        v.monthly_premium_cents
        for v in sandbox.scalars(select(Vehicle).where(Vehicle.policy_id == "POL-00001"))
    ] == [each, each]


@pytest.mark.parametrize(
    ("coverage", "amount", "message"),
    [
        ("collision", 75_000, "is not offered"),
        ("collision", 50_000, "already"),
        ("comprehensive", 50_000, "no comprehensive"),
    ],
)
def test_change_deductible_refusals(sandbox: Session, coverage: str, amount: int, message: str) -> None:
    make_policy(sandbox, comprehensive=None)
    verify(sandbox)
    with pytest.raises(ToolError, match=message):
        call(sandbox, "change_deductible", policy_id="POL-00001", coverage=coverage, deductible_cents=amount)
    assert sandbox.get(Policy, "POL-00001").collision_deductible_cents == 50_000  # type: ignore[union-attr]


def test_cancel_policy_switches_off_autopay_and_cancels_plans(sandbox: Session) -> None:
    make_policy(sandbox, status="grace", past_due_cents=20_000)
    verify(sandbox)
    call(sandbox, "create_instalment_plan", policy_id="POL-00001", instalment_count=2)
    call(sandbox, "set_autopay", policy_id="POL-00001", enabled=True)
    view = call(sandbox, "cancel_policy", policy_id="POL-00001", reason="sold_vehicle")
    assert (view["status"], view["cancelled_on"], view["cancellation_reason"]) == (
        "cancelled",
        "2026-10-01",
        "sold_vehicle",
    )
    assert sandbox.get(BillingAccount, "BA-00001").autopay is False  # type: ignore[union-attr]
    assert sandbox.get(InstalmentPlan, "IP-90001").status == "cancelled"  # type: ignore[union-attr]
    with pytest.raises(ToolError, match="is cancelled"):
        call(sandbox, "cancel_policy", policy_id="POL-00001", reason="cost")


def test_send_policy_document_records_what_was_sent(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    doc = call(sandbox, "send_policy_document", policy_id="POL-00001", doc_type="id_card", delivery="email")
    assert doc == {
        "document_id": "DOC-90001",
        "policy_id": "POL-00001",
        "claim_id": None,
        "doc_type": "id_card",
        "status": "sent",
        "delivery": "email",
        "created_on": "2026-10-01",
    }
    assert sandbox.get(Document, "DOC-90001").customer_id == "CU-00001"  # type: ignore[union-attr]


# --- claims ---------------------------------------------------------------------------------------------


#: A claim on POL-00001's first vehicle, before the coverage, cause and estimate of each test.
CLAIM = {
    "policy_id": "POL-00001",
    "vehicle_id": "VEH-000010",
    "incident_date": "2026-09-27",
    "injuries": False,
    "description": "It happened.",
}


def _file(
    sandbox: Session, coverage: str, cause: str = "animal", estimate: int = 235_000, **changes: Any
) -> Any:
    claim = {**CLAIM, **changes}
    return call(
        sandbox, "file_claim", coverage=coverage, cause=cause, estimated_damage_cents=estimate, **claim
    )


@pytest.mark.parametrize(
    ("coverage", "full_glass", "deductible"),
    [
        ("collision", False, 25_000),
        ("comprehensive", False, 100_000),
        ("glass", True, 0),
        ("glass", False, 100_000),
        ("liability", False, 0),
    ],
)
def test_file_claim_sets_the_deductible_from_the_coverage(
    sandbox: Session, coverage: str, full_glass: bool, deductible: int
) -> None:
    make_policy(sandbox, collision=25_000, comprehensive=100_000, full_glass=full_glass)
    verify(sandbox)
    claim = _file(sandbox, coverage)
    assert (claim["claim_id"], claim["status"], claim["deductible_cents"]) == (
        "CLM-90001",
        "open",
        deductible,
    )
    row = sandbox.get(Claim, "CLM-90001")
    assert row is not None and row.reported_on == TODAY and row.payout_cents is None


def test_file_claim_refusals(sandbox: Session) -> None:
    make_policy(sandbox, collision=None, comprehensive=None)
    verify(sandbox)
    with pytest.raises(ToolError, match="no collision coverage"):
        _file(sandbox, "collision", "object_collision")
    with pytest.raises(ToolError, match="no comprehensive coverage"):
        _file(sandbox, "glass", "glass_breakage")
    with pytest.raises(ToolError, match="in the future"):
        _file(sandbox, "liability", "vehicle_collision", 1, incident_date="2026-10-02")
    assert sandbox.get(Claim, "CLM-90001") is None


def test_approve_pays_estimate_minus_deductible_and_decides_only_open_claims(sandbox: Session) -> None:
    make_policy(sandbox, comprehensive=100_000)
    verify(sandbox)
    _file(sandbox, "comprehensive")
    claim = call(sandbox, "approve_claim_payout", claim_id="CLM-90001")
    assert (claim["status"], claim["payout_cents"]) == ("approved", 135_000)
    with pytest.raises(ToolError, match="only an open claim"):
        call(sandbox, "refer_claim_to_adjuster", claim_id="CLM-90001")
    assert sandbox.get(Claim, "CLM-90001").status == "approved"  # type: ignore[union-attr]


def test_refer_to_adjuster_and_request_evidence_once(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    _file(sandbox, "comprehensive", cause="theft", estimate=3_100_000)
    assert call(sandbox, "refer_claim_to_adjuster", claim_id="CLM-90001")["status"] == "adjuster_review"
    doc = call(sandbox, "request_claim_document", claim_id="CLM-90001", doc_type="police_report")
    assert (doc["claim_id"], doc["status"], doc["delivery"]) == ("CLM-90001", "requested", "upload")
    with pytest.raises(ToolError, match="already on file"):
        call(sandbox, "request_claim_document", claim_id="CLM-90001", doc_type="police_report")
    assert count_rows(sandbox, Document, claim_id="CLM-90001") == 1


# --- customer details and tickets -----------------------------------------------------------------------


def test_update_contact_details_normalises_and_refuses_a_taken_email(sandbox: Session) -> None:
    make_policy(sandbox, 1)
    make_policy(sandbox, 2)
    verify(sandbox, 1)
    view = call(
        sandbox,
        "update_contact_details",
        customer_id="CU-00001",
        email="New@Example.test",
        phone="(312) 555 0123",
    )
    assert (view["email"], view["phone"]) == ("new@example.test", "312-555-0123")
    with pytest.raises(ToolError, match="belongs to another customer"):
        call(sandbox, "update_contact_details", customer_id="CU-00001", email="holder2@example.test")
    assert sandbox.get(Customer, "CU-00001").email == "new@example.test"  # type: ignore[union-attr]


def test_update_mailing_address(sandbox: Session) -> None:
    make_policy(sandbox)
    verify(sandbox)
    address = {"customer_id": "CU-00001", "street": "9 Elm St", "city": "Peoria", "state": "IL"}
    with pytest.raises(ToolError, match="five-digit ZIP"):
        call(sandbox, "update_mailing_address", zip_code="616", **address)
    call(sandbox, "update_mailing_address", zip_code="61602", **address)
    customer = sandbox.get(Customer, "CU-00001")
    assert customer is not None and (customer.street, customer.city, customer.zip_code) == (
        "9 Elm St",
        "Peoria",
        "61602",
    )


def test_ticket_for_another_customers_policy_is_refused(sandbox: Session) -> None:
    make_policy(sandbox, 1)
    make_policy(sandbox, 2)
    with pytest.raises(ToolError, match="does not belong to customer CU-00001"):
        call(
            sandbox,
            "create_support_ticket",
            customer_id="CU-00001",
            policy_id="POL-00002",
            category="complaint",
            priority="high",
            subject="s",
            description="d",
        )
    assert count_rows(sandbox, SupportTicket, customer_id="CU-00001") == 0


def test_unknown_ids_and_bad_arguments(sandbox: Session) -> None:
    with pytest.raises(ToolError, match="Policy POL-1 not found"):
        call(sandbox, "get_policy", policy_id="POL-1")
    with pytest.raises(ToolError, match="Claim CLM-1 not found"):
        call(sandbox, "get_claim", claim_id="CLM-1")
    with pytest.raises(InvalidArgumentsError, match="coverage"):
        domain.tools_by_name["change_deductible"].validate(
            {"policy_id": "P", "coverage": "glass", "deductible_cents": 1}
        )
    with pytest.raises(InvalidArgumentsError, match="verbose"):
        domain.tools_by_name["get_policy"].validate({"policy_id": "P", "verbose": True})


def test_read_views_of_a_seeded_policy(sandbox: Session) -> None:
    policy = call(sandbox, "get_policy", policy_id="POL-20005")
    billing = call(sandbox, "get_billing_account", policy_id="POL-20005")
    assert policy["status"] == billing["policy_status"] == "grace"
    assert policy["monthly_premium_cents"] == sum(
        v["monthly_premium_cents"] for v in policy["vehicles"] if v["status"] == "active"
    )
    assert all("date_of_birth" not in d for d in policy["drivers"])
    assert billing["past_due_cents"] > 0
    assert call(sandbox, "list_documents", policy_id="POL-20005")
    assert isinstance(call(sandbox, "list_claims", policy_id="POL-20005"), list)
    assert isinstance(call(sandbox, "list_support_tickets", customer_id="CU-10005"), list)
