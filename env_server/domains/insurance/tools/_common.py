"""Lookups and guards every tool module shares: each raises the agent-facing `ToolError` in one place."""

from __future__ import annotations

from datetime import date
from typing import TypeVar

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, is_verified
from env_server.domains.insurance.models import (
    BillingAccount,
    Claim,
    Customer,
    Driver,
    IdentityVerification,
    Policy,
    Vehicle,
)
from env_server.domains.insurance.rating import premium_under


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
    if not is_verified(ctx, IdentityVerification.customer_id, customer_id):
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
