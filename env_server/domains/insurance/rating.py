"""The rating table: a vehicle's monthly premium from its use and the policy's coverages.

Shared by the seed and the tools, so seeded premiums and premiums recomputed after a change agree.
"""

from __future__ import annotations

from typing import Protocol

#: Base liability premium per vehicle and month, by use of the vehicle.
USAGE_BASE_CENTS = {"pleasure": 4_800, "commute": 6_200, "business": 8_600}
#: Surcharge for higher liability limits.
LIABILITY_SURCHARGE_CENTS = {"25/50/25": 0, "50/100/50": 900, "100/300/100": 1_800, "250/500/250": 3_200}
#: Collision coverage premium by deductible (a lower deductible costs more).
COLLISION_CENTS = {25_000: 3_800, 50_000: 3_200, 100_000: 2_500, 200_000: 1_900}
#: Comprehensive coverage premium by deductible.
COMPREHENSIVE_CENTS = {25_000: 1_600, 50_000: 1_300, 100_000: 1_000, 200_000: 800}
#: Full-glass option (glass claims without deductible).
FULL_GLASS_CENTS = 300


def vehicle_premium_cents(
    usage: str,
    liability_limits: str,
    collision_deductible_cents: int | None,
    comprehensive_deductible_cents: int | None,
    full_glass: bool,
) -> int:
    """Monthly premium of one vehicle under the given coverages.

    Args:
        usage: "pleasure", "commute" or "business".
        liability_limits: one of the written limits, e.g. "50/100/50".
        collision_deductible_cents: the collision deductible, or None without collision coverage.
        comprehensive_deductible_cents: the comprehensive deductible, or None without it.
        full_glass: whether the full-glass option is on.

    Returns:
        The premium in cents.
    """
    total = USAGE_BASE_CENTS[usage] + LIABILITY_SURCHARGE_CENTS[liability_limits]
    if collision_deductible_cents is not None:
        total += COLLISION_CENTS[collision_deductible_cents]
    if comprehensive_deductible_cents is not None:
        total += COMPREHENSIVE_CENTS[comprehensive_deductible_cents]
    if full_glass:
        total += FULL_GLASS_CENTS
    return total


class Coverages(Protocol):
    """What a vehicle's premium depends on in its policy (a `Policy` row or a family's `PolicySpec`)."""

    liability_limits: str
    collision_deductible_cents: int | None
    comprehensive_deductible_cents: int | None
    full_glass: bool


def premium_under(policy: Coverages, usage: str) -> int:
    """Monthly premium of a vehicle used for `usage` under the coverages `policy` carries now."""
    return vehicle_premium_cents(
        usage,
        policy.liability_limits,
        policy.collision_deductible_cents,
        policy.comprehensive_deductible_cents,
        policy.full_glass,
    )
