"""What the tools return: pydantic views of the tables, shaped for the agent.

Identity factors (a customer's date of birth and ZIP code) never appear in a view, so the agent can only
verify a caller with details the caller gives. Drivers show an age (on the domain's today) instead of a
date of birth for the same reason.
"""

from __future__ import annotations

from datetime import date, datetime

from pydantic import Field
from sqlalchemy import select

from env_server.domain import RowView, ToolContext
from env_server.domains.insurance.models import Customer, Driver, InstalmentPlan, Payment, Policy
from env_server.domains.insurance.tools._common import _get_billing, _vehicles, age_on


class CustomerView(RowView):
    """A customer profile without identity factors."""

    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    street: str
    city: str
    state: str = Field(description="State of residence.")
    customer_since: date
    policy_ids: list[str] = Field(default_factory=list)


class VerificationView(RowView):
    """The outcome of a successful identity check."""

    verification_id: str
    customer_id: str
    verified: bool = True


class VehicleView(RowView):
    """A vehicle on a policy."""

    vehicle_id: str
    vin: str
    year: int
    make: str
    model: str
    usage: str
    ownership: str
    lienholder: str | None
    monthly_premium_cents: int
    status: str
    added_on: date
    removed_on: date | None


class DriverView(RowView):
    """A driver on a policy; `age` is in whole years on today's date."""

    driver_id: str
    first_name: str
    last_name: str
    age: int
    license_number: str
    license_state: str
    relationship: str
    status: str = Field(description="listed (covered), excluded (never covered) or removed.")
    added_on: date
    excluded_on: date | None
    removed_on: date | None


class PolicyView(RowView):
    """A policy with its coverages, vehicles and drivers."""

    policy_id: str
    customer_id: str
    state: str = Field(description="Rating state: the state whose rules apply to the policy.")
    status: str
    term_start: date
    term_end: date
    monthly_premium_cents: int
    liability_limits: str
    collision_deductible_cents: int | None = Field(description="None: the policy has no collision coverage.")
    comprehensive_deductible_cents: int | None = Field(
        description="None: the policy has no comprehensive coverage."
    )
    full_glass: bool
    grace_ends_on: date | None
    lapsed_on: date | None
    cancelled_on: date | None
    cancellation_reason: str | None
    vehicles: list[VehicleView]
    drivers: list[DriverView]


class PaymentView(RowView):
    """A payment charged to the method on file."""

    payment_id: str
    amount_cents: int
    paid_on: date
    method: str


class InstalmentPlanView(RowView):
    """A catch-up plan for a past-due amount."""

    plan_id: str
    total_cents: int
    instalment_count: int
    instalment_cents: int
    first_due_date: date
    status: str
    created_on: date


class BillingView(RowView):
    """A policy's billing account, its instalment plans and its payments (newest first)."""

    billing_account_id: str
    policy_id: str
    policy_status: str
    monthly_premium_cents: int
    payment_method: str
    payment_last4: str
    autopay: bool
    past_due_cents: int
    next_due_date: date
    instalment_plans: list[InstalmentPlanView]
    payments: list[PaymentView]


class ClaimView(RowView):
    """A claim and where it stands."""

    claim_id: str
    policy_id: str
    vehicle_id: str
    coverage: str
    cause: str
    incident_date: date
    reported_on: date
    estimated_damage_cents: int
    deductible_cents: int
    injuries: bool
    status: str
    payout_cents: int | None
    description: str


class DocumentView(RowView):
    """A document sent to, or requested from, a customer."""

    document_id: str
    policy_id: str
    claim_id: str | None
    doc_type: str
    status: str
    delivery: str
    created_on: date


class TicketView(RowView):
    """A support ticket."""

    ticket_id: str
    customer_id: str
    policy_id: str | None
    category: str
    priority: str
    status: str
    subject: str
    description: str
    created_at: datetime


def customer_view(ctx: ToolContext, customer: Customer) -> CustomerView:
    """The agent's view of a customer, with the ids of their policies."""
    policy_ids = ctx.session.scalars(
        select(Policy.policy_id).where(Policy.customer_id == customer.customer_id).order_by(Policy.policy_id)
    )
    return CustomerView.of(customer, policy_ids=list(policy_ids))


def policy_view(ctx: ToolContext, policy: Policy) -> PolicyView:
    """The agent's view of a policy, with its vehicles and drivers."""
    ctx.session.flush()
    today = ctx.now.date()
    drivers = ctx.session.scalars(
        select(Driver).where(Driver.policy_id == policy.policy_id).order_by(Driver.driver_id)
    )
    return PolicyView.of(
        policy,
        vehicles=_vehicles(ctx, policy),
        drivers=[DriverView.of(d, age=age_on(d.date_of_birth, today)) for d in drivers],
    )


def billing_view(ctx: ToolContext, policy: Policy) -> BillingView:
    """The agent's view of a policy's billing account."""
    ctx.session.flush()
    account = _get_billing(ctx, policy)
    plans = ctx.session.scalars(
        select(InstalmentPlan)
        .where(InstalmentPlan.billing_account_id == account.billing_account_id)
        .order_by(InstalmentPlan.plan_id)
    )
    payments = ctx.session.scalars(
        select(Payment)
        .where(Payment.billing_account_id == account.billing_account_id)
        .order_by(Payment.paid_on.desc(), Payment.payment_id.desc())
    )
    return BillingView.of(
        account,
        policy_status=policy.status,
        monthly_premium_cents=policy.monthly_premium_cents,
        instalment_plans=list(plans),
        payments=list(payments),
    )
