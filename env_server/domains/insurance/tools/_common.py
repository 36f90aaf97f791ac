"""Lookups and guards every tool module shares: each raises the agent-facing `ToolError` in one place."""

from __future__ import annotations

from datetime import date
from typing import TypeVar

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError
from env_server.domains.insurance.models import (
    BillingAccount,
    Claim,
    Customer,
    Driver,
    IdentityVerification,
    InstalmentPlan,
    Payment,
    Policy,
    Vehicle,
)
from env_server.domains.insurance.rating import premium_under
from env_server.domains.insurance.tools._views import (
    BillingView,
    CustomerView,
    DriverView,
    PolicyView,
)


def _get_customer(ctx: ToolContext, customer_id: str) -> Customer:
    """The customer `customer_id`, or a not-found `ToolError`."""
    return ctx.get_or_refuse(Customer, customer_id, f"Customer {customer_id} not found")


def _get_policy(ctx: ToolContext, policy_id: str) -> Policy:
    """The policy `policy_id`, or a not-found `ToolError`."""
    return ctx.get_or_refuse(Policy, policy_id, f"Policy {policy_id} not found")


def _get_vehicle(ctx: ToolContext, policy: Policy, vehicle_id: str) -> Vehicle:
    """The vehicle `vehicle_id` of `policy`, or a not-found `ToolError`."""
    return _get_on_policy(ctx, Vehicle, vehicle_id, policy)


def _get_driver(ctx: ToolContext, policy: Policy, driver_id: str) -> Driver:
    """The driver `driver_id` of `policy`, or a not-found `ToolError`."""
    return _get_on_policy(ctx, Driver, driver_id, policy)


OnPolicy = TypeVar("OnPolicy", Vehicle, Driver)


def _get_on_policy(ctx: ToolContext, model: type[OnPolicy], key: str, policy: Policy) -> OnPolicy:
    return ctx.get_or_refuse(
        model,
        key,
        f"{model.__name__} {key} not found on policy {policy.policy_id}",
        where=lambda row: row.policy_id == policy.policy_id,
    )


def _get_claim(ctx: ToolContext, claim_id: str) -> Claim:
    """The claim `claim_id`, or a not-found `ToolError`."""
    return ctx.get_or_refuse(Claim, claim_id, f"Claim {claim_id} not found")


def _get_billing(ctx: ToolContext, policy: Policy) -> BillingAccount:
    """The billing account of `policy` (every policy has exactly one)."""
    return ctx.session.scalars(
        select(BillingAccount).where(BillingAccount.policy_id == policy.policy_id)
    ).one()


def require_verified(ctx: ToolContext, customer_id: str) -> None:
    """Refuse a write unless `customer_id` passed `verify_customer_identity` in this conversation."""
    found = ctx.session.scalars(
        select(IdentityVerification.verification_id).where(IdentityVerification.customer_id == customer_id)
    ).first()
    if found is None:
        raise ToolError(
            f"Customer {customer_id} has not been verified in this conversation; "
            "call verify_customer_identity first"
        )


def require_open_policy(policy: Policy) -> None:
    """Refuse a change to a cancelled policy (the system keeps cancelled policies read-only)."""
    if policy.status == "cancelled":
        raise ToolError(f"Policy {policy.policy_id} is cancelled; it cannot be changed")


def end_grace(policy: Policy) -> None:
    """A policy in its grace period whose arrears are settled (paid or planned) is active again."""
    if policy.status == "grace":
        policy.status = "active"
        policy.grace_ends_on = None


def verified_policy(ctx: ToolContext, policy_id: str, *, allow_cancelled: bool = False) -> Policy:
    """The policy `policy_id`, once its owner is verified and (unless allowed) it is not cancelled."""
    policy = _get_policy(ctx, policy_id)
    require_verified(ctx, policy.customer_id)
    if not allow_cancelled:
        require_open_policy(policy)
    return policy


def age_on(born: date, day: date) -> int:
    """Age in whole years on `day`."""
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def reprice(ctx: ToolContext, policy: Policy) -> None:
    """Recompute every active vehicle's premium and the policy premium after a coverage change."""
    total = 0
    for vehicle in _vehicles(ctx, policy):
        if vehicle.status != "active":
            continue
        vehicle.monthly_premium_cents = premium_under(policy, vehicle.usage)
        total += vehicle.monthly_premium_cents
    policy.monthly_premium_cents = total


def _vehicles(ctx: ToolContext, policy: Policy) -> list[Vehicle]:
    return list(
        ctx.session.scalars(
            select(Vehicle).where(Vehicle.policy_id == policy.policy_id).order_by(Vehicle.vehicle_id)
        )
    )


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
