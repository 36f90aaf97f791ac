"""Tables of the auto-insurance domain: customers, their policies, vehicles, drivers, billing, claims.

Enumerations are `String` columns guarded by a CHECK (the `Literal` aliases below list the values), so
SQLite and PostgreSQL accept exactly the same rows. Money is integer cents; dates are `Date`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from env_server.domain import allowed_values, one_of

UsState = Literal["AZ", "CA", "CO", "FL", "GA", "IL", "KS", "MI", "NC", "NY", "OH", "PA", "TX", "VA", "WA"]
PolicyStatus = Literal["active", "grace", "lapsed", "cancelled"]
CancellationReason = Literal[
    "sold_vehicle", "switched_carrier", "moved_out_of_state", "cost", "nonpayment", "other"
]
LiabilityLimits = Literal["25/50/25", "50/100/50", "100/300/100", "250/500/250"]
VehicleUsage = Literal["pleasure", "commute", "business"]
VehicleOwnership = Literal["owned", "financed", "leased"]
VehicleStatus = Literal["active", "removed"]
DriverRelationship = Literal["named_insured", "spouse", "child", "parent", "other_household"]
DriverStatus = Literal["listed", "excluded", "removed"]
PaymentMethod = Literal["card", "bank_account"]
PlanStatus = Literal["active", "completed", "cancelled"]
ClaimCoverage = Literal["collision", "comprehensive", "glass", "liability"]
ClaimCause = Literal[
    "vehicle_collision",
    "object_collision",
    "animal",
    "theft",
    "vandalism",
    "weather",
    "fire",
    "falling_object",
    "glass_breakage",
]
ClaimStatus = Literal["open", "adjuster_review", "approved", "denied", "closed"]
DocumentType = Literal[
    "id_card",
    "declarations",
    "proof_of_insurance",
    "police_report",
    "damage_photos",
    "repair_estimate",
]
DocumentStatus = Literal["sent", "requested", "received"]
DocumentDelivery = Literal["email", "mail", "upload"]
TicketCategory = Literal[
    "billing", "claims", "policy_change", "underwriting", "complaint", "cancellation", "general"
]
TicketPriority = Literal["low", "normal", "high", "urgent"]
TicketStatus = Literal["open", "pending", "resolved"]
VerificationMethod = Literal["dob_zip"]

#: The domain's frozen clock (Thursday 1 October 2026, 09:00); tools see it as `ctx.now`.
NOW = datetime(2026, 10, 1, 9, 0)

#: Deductible amounts the company writes, in cents ($250, $500, $1,000, $2,000).
DEDUCTIBLE_OPTIONS_CENTS = (25_000, 50_000, 100_000, 200_000)


_DEDUCTIBLES_SQL = ", ".join(str(v) for v in DEDUCTIBLE_OPTIONS_CENTS)


class Base(DeclarativeBase):
    """Declarative base bound to the insurance domain's own MetaData."""

    metadata = MetaData()


class Customer(Base):
    """A policyholder: the person who owns policies and is the only one who may change them."""

    __tablename__ = "customers"
    __table_args__ = (one_of("state", UsState, name="ck_customers_state"),)

    customer_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "CU-10001"
    first_name: Mapped[str] = mapped_column(String(60), nullable=False)
    last_name: Mapped[str] = mapped_column(String(60), nullable=False)
    email: Mapped[str] = mapped_column(String(120), nullable=False, unique=True)
    phone: Mapped[str] = mapped_column(String(20), nullable=False)  # "312-555-0187"
    date_of_birth: Mapped[date] = mapped_column(
        Date, nullable=False
    )  # identity factor; never shown to agents
    street: Mapped[str] = mapped_column(String(120), nullable=False)  # mailing address
    city: Mapped[str] = mapped_column(String(60), nullable=False)
    state: Mapped[str] = mapped_column(String(2), nullable=False)  # state of residence
    zip_code: Mapped[str] = mapped_column(String(5), nullable=False)  # identity factor; never shown to agents
    customer_since: Mapped[date] = mapped_column(Date, nullable=False)


class Policy(Base):
    """A personal auto policy; its monthly premium is the sum of its active vehicles' premiums."""

    __tablename__ = "policies"
    __table_args__ = (
        one_of("state", UsState, name="ck_policies_state"),
        one_of("status", PolicyStatus, name="ck_policies_status"),
        one_of("liability_limits", LiabilityLimits, name="ck_policies_liability"),
        CheckConstraint(
            f"collision_deductible_cents IS NULL OR collision_deductible_cents IN ({_DEDUCTIBLES_SQL})",
            name="ck_policies_collision_deductible",
        ),
        CheckConstraint(
            "comprehensive_deductible_cents IS NULL "
            f"OR comprehensive_deductible_cents IN ({_DEDUCTIBLES_SQL})",
            name="ck_policies_comprehensive_deductible",
        ),
        CheckConstraint(
            "NOT full_glass OR comprehensive_deductible_cents IS NOT NULL",
            name="ck_policies_glass_needs_comp",
        ),
        CheckConstraint("monthly_premium_cents > 0", name="ck_policies_premium_positive"),
        CheckConstraint("term_end > term_start", name="ck_policies_term"),
        CheckConstraint("status <> 'grace' OR grace_ends_on IS NOT NULL", name="ck_policies_grace_date"),
        CheckConstraint("status <> 'lapsed' OR lapsed_on IS NOT NULL", name="ck_policies_lapse_date"),
        CheckConstraint(
            "status <> 'cancelled' OR (cancelled_on IS NOT NULL AND cancellation_reason IS NOT NULL)",
            name="ck_policies_cancel_fields",
        ),
        CheckConstraint(
            f"cancellation_reason IS NULL OR {allowed_values('cancellation_reason', CancellationReason)}",
            name="ck_policies_cancel_reason",
        ),
    )

    policy_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "POL-20001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), nullable=False, index=True)
    state: Mapped[str] = mapped_column(String(2), nullable=False)  # rating state: its rules apply
    status: Mapped[str] = mapped_column(String(12), nullable=False)
    term_start: Mapped[date] = mapped_column(Date, nullable=False)
    term_end: Mapped[date] = mapped_column(Date, nullable=False)
    monthly_premium_cents: Mapped[int] = mapped_column(Integer, nullable=False)
    liability_limits: Mapped[str] = mapped_column(
        String(12), nullable=False
    )  # bodily injury/accident/property, $k
    collision_deductible_cents: Mapped[int | None] = mapped_column(Integer)  # NULL: no collision coverage
    comprehensive_deductible_cents: Mapped[int | None] = mapped_column(
        Integer
    )  # NULL: no comprehensive coverage
    full_glass: Mapped[bool] = mapped_column(Boolean, nullable=False)  # glass claims carry no deductible
    grace_ends_on: Mapped[date | None] = mapped_column(Date)  # last day of the grace period (status grace)
    lapsed_on: Mapped[date | None] = mapped_column(Date)  # day coverage ended for non-payment (status lapsed)
    cancelled_on: Mapped[date | None] = mapped_column(Date)
    cancellation_reason: Mapped[str | None] = mapped_column(String(24))


class Vehicle(Base):
    """A vehicle on a policy; removed vehicles stay as history with `status = 'removed'`."""

    __tablename__ = "vehicles"
    __table_args__ = (
        one_of("usage", VehicleUsage, name="ck_vehicles_usage"),
        one_of("ownership", VehicleOwnership, name="ck_vehicles_ownership"),
        one_of("status", VehicleStatus, name="ck_vehicles_status"),
        CheckConstraint("length(vin) = 17", name="ck_vehicles_vin_length"),
        CheckConstraint("year BETWEEN 1950 AND 2027", name="ck_vehicles_year"),
        CheckConstraint("monthly_premium_cents > 0", name="ck_vehicles_premium_positive"),
        CheckConstraint("(ownership = 'owned') = (lienholder IS NULL)", name="ck_vehicles_lienholder"),
        CheckConstraint("(status = 'removed') = (removed_on IS NOT NULL)", name="ck_vehicles_removed_on"),
    )

    vehicle_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "VEH-30001"
    policy_id: Mapped[str] = mapped_column(ForeignKey("policies.policy_id"), nullable=False, index=True)
    vin: Mapped[str] = mapped_column(String(17), nullable=False, index=True)
    year: Mapped[int] = mapped_column(Integer, nullable=False)  # model year
    make: Mapped[str] = mapped_column(String(40), nullable=False)
    model: Mapped[str] = mapped_column(String(40), nullable=False)
    usage: Mapped[str] = mapped_column(String(12), nullable=False)  # rating use of the vehicle
    ownership: Mapped[str] = mapped_column(String(10), nullable=False)
    lienholder: Mapped[str | None] = mapped_column(String(80))  # lender or lessor; required unless owned
    monthly_premium_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # this vehicle's share
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    added_on: Mapped[date] = mapped_column(Date, nullable=False)
    removed_on: Mapped[date | None] = mapped_column(Date)


class Driver(Base):
    """A household member on a policy: listed (covered to drive), excluded (never covered) or removed."""

    __tablename__ = "drivers"
    __table_args__ = (
        one_of("relationship", DriverRelationship, name="ck_drivers_relationship"),
        one_of("status", DriverStatus, name="ck_drivers_status"),
        one_of("license_state", UsState, name="ck_drivers_license_state"),
        CheckConstraint("status <> 'excluded' OR excluded_on IS NOT NULL", name="ck_drivers_excluded_on"),
        CheckConstraint("(status = 'removed') = (removed_on IS NOT NULL)", name="ck_drivers_removed_on"),
        CheckConstraint(
            "relationship <> 'named_insured' OR status = 'listed'", name="ck_drivers_named_insured_listed"
        ),
    )

    driver_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "DRV-40001"
    policy_id: Mapped[str] = mapped_column(ForeignKey("policies.policy_id"), nullable=False, index=True)
    first_name: Mapped[str] = mapped_column(String(60), nullable=False)
    last_name: Mapped[str] = mapped_column(String(60), nullable=False)
    date_of_birth: Mapped[date] = mapped_column(Date, nullable=False)
    license_number: Mapped[str] = mapped_column(String(20), nullable=False)
    license_state: Mapped[str] = mapped_column(String(2), nullable=False)
    relationship: Mapped[str] = mapped_column(String(16), nullable=False)  # to the named insured
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    added_on: Mapped[date] = mapped_column(Date, nullable=False)
    excluded_on: Mapped[date | None] = mapped_column(Date)  # kept when an excluded driver is later removed
    removed_on: Mapped[date | None] = mapped_column(Date)


class BillingAccount(Base):
    """The billing account of one policy: the payment method on file and what is past due."""

    __tablename__ = "billing_accounts"
    __table_args__ = (
        one_of("payment_method", PaymentMethod, name="ck_billing_method"),
        CheckConstraint("past_due_cents >= 0", name="ck_billing_past_due"),
        CheckConstraint("length(payment_last4) = 4", name="ck_billing_last4"),
    )

    billing_account_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "BA-50001"
    policy_id: Mapped[str] = mapped_column(ForeignKey("policies.policy_id"), nullable=False, unique=True)
    payment_method: Mapped[str] = mapped_column(String(14), nullable=False)  # the only method we may charge
    payment_last4: Mapped[str] = mapped_column(String(4), nullable=False)
    autopay: Mapped[bool] = mapped_column(Boolean, nullable=False)  # charge the premium on the due date
    past_due_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # unpaid premium from past months
    next_due_date: Mapped[date] = mapped_column(Date, nullable=False)  # next monthly premium due date


class InstalmentPlan(Base):
    """A catch-up plan that spreads a past-due amount over a few monthly instalments."""

    __tablename__ = "instalment_plans"
    __table_args__ = (
        one_of("status", PlanStatus, name="ck_plans_status"),
        CheckConstraint("instalment_count BETWEEN 2 AND 6", name="ck_plans_count"),
        CheckConstraint("total_cents > 0 AND instalment_cents > 0", name="ck_plans_amounts_positive"),
        CheckConstraint("instalment_cents * instalment_count >= total_cents", name="ck_plans_covers_total"),
    )

    plan_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "IP-60001"
    billing_account_id: Mapped[str] = mapped_column(
        ForeignKey("billing_accounts.billing_account_id"), nullable=False, index=True
    )
    total_cents: Mapped[int] = mapped_column(
        Integer, nullable=False
    )  # the past-due amount moved into the plan
    instalment_count: Mapped[int] = mapped_column(Integer, nullable=False)
    instalment_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # each instalment, rounded up
    first_due_date: Mapped[date] = mapped_column(Date, nullable=False)
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    created_on: Mapped[date] = mapped_column(Date, nullable=False)


class Payment(Base):
    """A payment charged to the method on file of a billing account."""

    __tablename__ = "payments"
    __table_args__ = (
        one_of("method", PaymentMethod, name="ck_payments_method"),
        CheckConstraint("amount_cents > 0", name="ck_payments_amount_positive"),
    )

    payment_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "PAY-10001"
    billing_account_id: Mapped[str] = mapped_column(
        ForeignKey("billing_accounts.billing_account_id"), nullable=False, index=True
    )
    amount_cents: Mapped[int] = mapped_column(Integer, nullable=False)
    paid_on: Mapped[date] = mapped_column(Date, nullable=False)
    method: Mapped[str] = mapped_column(String(14), nullable=False)


class Claim(Base):
    """A first-notice-of-loss claim against one vehicle of a policy."""

    __tablename__ = "claims"
    __table_args__ = (
        one_of("coverage", ClaimCoverage, name="ck_claims_coverage"),
        one_of("cause", ClaimCause, name="ck_claims_cause"),
        one_of("status", ClaimStatus, name="ck_claims_status"),
        CheckConstraint("estimated_damage_cents > 0", name="ck_claims_estimate_positive"),
        CheckConstraint("deductible_cents >= 0", name="ck_claims_deductible"),
        CheckConstraint("reported_on >= incident_date", name="ck_claims_reported_after_incident"),
        CheckConstraint("(status = 'approved') = (payout_cents IS NOT NULL)", name="ck_claims_payout"),
    )

    claim_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "CLM-70001"
    policy_id: Mapped[str] = mapped_column(ForeignKey("policies.policy_id"), nullable=False, index=True)
    vehicle_id: Mapped[str] = mapped_column(ForeignKey("vehicles.vehicle_id"), nullable=False)
    coverage: Mapped[str] = mapped_column(String(14), nullable=False)  # which part of the policy pays
    cause: Mapped[str] = mapped_column(String(20), nullable=False)  # what happened
    incident_date: Mapped[date] = mapped_column(Date, nullable=False)
    reported_on: Mapped[date] = mapped_column(Date, nullable=False)
    estimated_damage_cents: Mapped[int] = mapped_column(Integer, nullable=False)
    deductible_cents: Mapped[int] = mapped_column(Integer, nullable=False)  # applied to this claim
    injuries: Mapped[bool] = mapped_column(Boolean, nullable=False)  # anyone hurt in the incident
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    payout_cents: Mapped[int | None] = mapped_column(Integer)  # set when approved
    description: Mapped[str] = mapped_column(Text, nullable=False)  # the customer's account; free text


class Document(Base):
    """A document sent to a customer (ID cards, declarations) or requested from them (claim evidence)."""

    __tablename__ = "documents"
    __table_args__ = (
        one_of("doc_type", DocumentType, name="ck_documents_type"),
        one_of("status", DocumentStatus, name="ck_documents_status"),
        one_of("delivery", DocumentDelivery, name="ck_documents_delivery"),
    )

    document_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "DOC-80001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), nullable=False, index=True)
    policy_id: Mapped[str] = mapped_column(ForeignKey("policies.policy_id"), nullable=False, index=True)
    claim_id: Mapped[str | None] = mapped_column(ForeignKey("claims.claim_id"))  # evidence for a claim
    doc_type: Mapped[str] = mapped_column(String(20), nullable=False)
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    delivery: Mapped[str] = mapped_column(String(8), nullable=False)  # how it travels
    created_on: Mapped[date] = mapped_column(Date, nullable=False)


class SupportTicket(Base):
    """A case handed to a back-office team (underwriting, billing, complaints...)."""

    __tablename__ = "support_tickets"
    __table_args__ = (
        one_of("category", TicketCategory, name="ck_tickets_category"),
        one_of("priority", TicketPriority, name="ck_tickets_priority"),
        one_of("status", TicketStatus, name="ck_tickets_status"),
    )

    ticket_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "TCK-10001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), nullable=False, index=True)
    policy_id: Mapped[str | None] = mapped_column(ForeignKey("policies.policy_id"))
    category: Mapped[str] = mapped_column(String(16), nullable=False)  # the team that handles it
    priority: Mapped[str] = mapped_column(String(8), nullable=False)
    status: Mapped[str] = mapped_column(String(10), nullable=False)
    subject: Mapped[str] = mapped_column(String(160), nullable=False)  # free text
    description: Mapped[str] = mapped_column(Text, nullable=False)  # free text
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class IdentityVerification(Base):
    """A successful identity check of a customer in this conversation; writes require one."""

    __tablename__ = "identity_verifications"
    __table_args__ = (one_of("method", VerificationMethod, name="ck_verifications_method"),)

    verification_id: Mapped[str] = mapped_column(String(16), primary_key=True)  # "IDV-90001"
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.customer_id"), nullable=False, index=True)
    method: Mapped[str] = mapped_column(String(10), nullable=False)  # the factors checked
    verified_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
