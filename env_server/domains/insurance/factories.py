"""Insurance entities, written once, for the seed (ORM rows), the families (patch rows) and the tool tests.

A policyholder's customer record, policy, vehicles, drivers and billing account, and a claim: each spec
states every column of its table, in the table's order (a family's row always listed them all), and the
rules that derive one value from others live here once (a driver's licence number from the rating state, a
claim's payout from its estimate and deductible). Callers draw in the order they always drew, so the seed's
rows and the generated tasks stay the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from env_server.domain import EntitySpec
from env_server.domains.insurance.models import (
    BillingAccount,
    Claim,
    Customer,
    Driver,
    Payment,
    Policy,
    Vehicle,
)


@dataclass
class CustomerSpec(EntitySpec[Customer], model=Customer):
    """A policyholder."""

    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: date
    street: str
    city: str
    state: str
    zip_code: str
    customer_since: date


@dataclass
class PolicySpec(EntitySpec[Policy], model=Policy):
    """An auto policy; its premium is the sum of its vehicles' (set once they are priced)."""

    policy_id: str
    customer_id: str
    state: str
    status: str
    term_start: date
    term_end: date
    monthly_premium_cents: int
    liability_limits: str
    collision_deductible_cents: int | None
    comprehensive_deductible_cents: int | None
    full_glass: bool
    grace_ends_on: date | None
    lapsed_on: date | None
    cancelled_on: date | None
    cancellation_reason: str | None


@dataclass
class VehicleSpec(EntitySpec[Vehicle], model=Vehicle):
    """A vehicle on a policy, priced by the rating table."""

    vehicle_id: str
    policy_id: str
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


@dataclass
class DriverSpec(EntitySpec[Driver], model=Driver):
    """A driver on a policy (see `driver`)."""

    driver_id: str
    policy_id: str
    first_name: str
    last_name: str
    date_of_birth: date
    license_number: str
    license_state: str
    relationship: str
    status: str
    added_on: date
    excluded_on: date | None
    removed_on: date | None


@dataclass
class BillingAccountSpec(EntitySpec[BillingAccount], model=BillingAccount):
    """A policy's billing account."""

    billing_account_id: str
    policy_id: str
    payment_method: str
    payment_last4: str
    autopay: bool
    past_due_cents: int
    next_due_date: date


@dataclass
class PaymentSpec(EntitySpec[Payment], model=Payment):
    """A payment charged to a billing account's method on file."""

    payment_id: str
    billing_account_id: str
    amount_cents: int
    paid_on: date
    method: str


@dataclass
class ClaimSpec(EntitySpec[Claim], model=Claim):
    """A claim on a policy's vehicle (see `claim`)."""

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


def license_number(rng: random.Random, state: str) -> str:
    """A drawn driver's licence number of `state`: the state code and nine digits."""
    return f"{state}{rng.randint(10**8, 10**9 - 1)}"


def driver(
    driver_id: str,
    policy_id: str,
    state: str,
    license_no: str,
    *,
    first: str,
    last: str,
    born: date,
    relationship: str,
    on: date,
    status: str = "listed",
) -> DriverSpec:
    """A driver listed (or excluded) on a policy of `state` from `on` (an excluded one, from that day)."""
    return DriverSpec(
        driver_id,
        policy_id,
        first,
        last,
        born,
        license_no,
        state,
        relationship,
        status,
        added_on=on,
        excluded_on=on if status == "excluded" else None,
        removed_on=None,
    )


def payout_cents(status: str, estimate: int, deductible: int) -> int | None:
    """An approved claim pays the estimate less the deductible; any other has no payout yet."""
    return max(0, estimate - deductible) if status == "approved" else None
