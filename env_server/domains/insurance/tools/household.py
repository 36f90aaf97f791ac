"""Vehicle and driver tools: what is insured on a policy and who may drive it."""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from sqlalchemy import select

from env_server.domain import ToolContext, ToolError, tool
from env_server.domains.insurance.models import Driver, UsState, Vehicle, VehicleOwnership, VehicleUsage
from env_server.domains.insurance.rating import premium_under
from env_server.domains.insurance.tools._common import _get_driver, _get_vehicle, age_on, verified_policy
from env_server.domains.insurance.tools._views import PolicyView, policy_view

_VIN = re.compile(r"^[A-HJ-NPR-Z0-9]{17}$")

#: Youngest age at which anyone can hold a driver's licence.
MIN_LICENSED_AGE = 16


@tool(kind="write")
def add_vehicle(
    ctx: ToolContext,
    policy_id: str,
    vin: str,
    year: int,
    make: str,
    model: str,
    usage: VehicleUsage,
    ownership: VehicleOwnership,
    lienholder: str | None = None,
) -> PolicyView:
    """Add a vehicle to a policy; its premium is rated and added to the policy premium from today.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        vin: the 17-character vehicle identification number, e.g. "1HGCM82633A004352".
        year: the model year, e.g. 2022.
        make: the manufacturer, e.g. "Honda".
        model: the model, e.g. "Civic".
        usage: "pleasure", "commute" (driven to work or school) or "business".
        ownership: "owned", "financed" or "leased".
        lienholder: the lender or lessor, required for a financed or leased vehicle, e.g. "Ally Financial".
    """
    policy = verified_policy(ctx, policy_id)
    vin = vin.strip().upper()
    if not _VIN.match(vin):
        raise ToolError(f"'{vin}' is not a valid VIN: 17 letters and digits, without I, O or Q")
    if not 1950 <= year <= ctx.now.year + 1:
        raise ToolError(f"Model year {year} is not valid")
    if (ownership == "owned") != (lienholder is None):
        raise ToolError("Give a lienholder for a financed or leased vehicle, and none for an owned one")
    insured = ctx.session.scalars(
        select(Vehicle).where(Vehicle.vin == vin, Vehicle.status == "active")
    ).first()
    if insured is not None:
        raise ToolError(f"VIN {vin} is already insured as vehicle {insured.vehicle_id}")
    premium = premium_under(policy, usage)
    ctx.session.add(
        Vehicle(
            vehicle_id=ctx.new_id("VEH"),
            policy_id=policy.policy_id,
            vin=vin,
            year=year,
            make=make.strip(),
            model=model.strip(),
            usage=usage,
            ownership=ownership,
            lienholder=lienholder.strip() if lienholder else None,
            monthly_premium_cents=premium,
            status="active",
            added_on=ctx.now.date(),
        )
    )
    policy.monthly_premium_cents += premium
    return policy_view(ctx, policy)


@tool(kind="write")
def remove_vehicle(ctx: ToolContext, policy_id: str, vehicle_id: str) -> PolicyView:
    """Remove a vehicle from a policy from today; its premium comes off the policy premium.

    A policy keeps at least one vehicle: to drop the last one, the policy is cancelled instead.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        vehicle_id: the vehicle to remove, e.g. "VEH-30117".
    """
    policy = verified_policy(ctx, policy_id)
    vehicle = _get_vehicle(ctx, policy, vehicle_id)
    if vehicle.status != "active":
        raise ToolError(f"Vehicle {vehicle_id} was already removed on {vehicle.removed_on}")
    others = ctx.session.scalars(
        select(Vehicle.vehicle_id).where(
            Vehicle.policy_id == policy.policy_id,
            Vehicle.status == "active",
            Vehicle.vehicle_id != vehicle_id,
        )
    ).first()
    if others is None:
        raise ToolError(
            f"Vehicle {vehicle_id} is the only vehicle on policy {policy_id}; it cannot be removed"
        )
    vehicle.status = "removed"
    vehicle.removed_on = ctx.now.date()
    policy.monthly_premium_cents -= vehicle.monthly_premium_cents
    return policy_view(ctx, policy)


@tool(kind="write")
def add_driver(
    ctx: ToolContext,
    policy_id: str,
    first_name: str,
    last_name: str,
    date_of_birth: date,
    license_number: str,
    license_state: UsState,
    relationship: Literal["spouse", "child", "parent", "other_household"],
    excluded: bool = False,
) -> PolicyView:
    """Add a household member to a policy, as a listed driver or (excluded=true) as an excluded driver.

    An excluded driver is never covered when driving the insured vehicles; exclusions are not written in
    every state (see the policy).

    Args:
        policy_id: the policy, e.g. "POL-20042".
        first_name: the driver's first name.
        last_name: the driver's last name.
        date_of_birth: the driver's date of birth, e.g. "2004-07-19".
        license_number: the driver's licence number as printed, e.g. "IL123456789".
        license_state: the two-letter state that issued the licence, e.g. "IL".
        relationship: to the policyholder: "spouse", "child", "parent" or "other_household".
        excluded: true to add the person as an excluded driver instead of a listed one.
    """
    policy = verified_policy(ctx, policy_id)
    today = ctx.now.date()
    if age_on(date_of_birth, today) < MIN_LICENSED_AGE:
        raise ToolError(
            f"A driver born on {date_of_birth} is under {MIN_LICENSED_AGE} and cannot be licensed"
        )
    license_number = license_number.strip().upper()
    duplicate = ctx.session.scalars(
        select(Driver.driver_id).where(
            Driver.policy_id == policy.policy_id,
            Driver.license_number == license_number,
            Driver.status != "removed",
        )
    ).first()
    if duplicate is not None:
        raise ToolError(f"Licence {license_number} is already on policy {policy_id} as driver {duplicate}")
    ctx.session.add(
        Driver(
            driver_id=ctx.new_id("DRV"),
            policy_id=policy.policy_id,
            first_name=first_name.strip(),
            last_name=last_name.strip(),
            date_of_birth=date_of_birth,
            license_number=license_number,
            license_state=license_state,
            relationship=relationship,
            status="excluded" if excluded else "listed",
            added_on=today,
            excluded_on=today if excluded else None,
        )
    )
    return policy_view(ctx, policy)


@tool(kind="write")
def remove_driver(ctx: ToolContext, policy_id: str, driver_id: str) -> PolicyView:
    """Take a driver (listed or excluded) off a policy from today.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        driver_id: the driver to remove, e.g. "DRV-40233".
    """
    policy = verified_policy(ctx, policy_id)
    driver = _get_driver(ctx, policy, driver_id)
    if driver.relationship == "named_insured":
        raise ToolError(f"Driver {driver_id} is the named insured and cannot be removed from the policy")
    if driver.status == "removed":
        raise ToolError(f"Driver {driver_id} was already removed on {driver.removed_on}")
    driver.status = "removed"
    driver.removed_on = ctx.now.date()
    return policy_view(ctx, policy)


@tool(kind="write")
def exclude_driver(ctx: ToolContext, policy_id: str, driver_id: str) -> PolicyView:
    """Turn a listed driver into an excluded driver from today: they are no longer covered to drive.

    Args:
        policy_id: the policy, e.g. "POL-20042".
        driver_id: the listed driver to exclude, e.g. "DRV-40233".
    """
    policy = verified_policy(ctx, policy_id)
    driver = _get_driver(ctx, policy, driver_id)
    if driver.relationship == "named_insured":
        raise ToolError(f"Driver {driver_id} is the named insured and cannot be excluded")
    if driver.status != "listed":
        raise ToolError(f"Driver {driver_id} is {driver.status}; only a listed driver can be excluded")
    driver.status = "excluded"
    driver.excluded_on = ctx.now.date()
    return policy_view(ctx, policy)
