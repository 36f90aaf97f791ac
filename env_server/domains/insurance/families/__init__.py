"""Scenario families of the insurance domain: parameterised builders of training tasks.

Each family exercises numbered rules of `policy.md` (listed in `covers`) on fresh customers and policies, so
generated tasks never share an entity with a benchmark task.
"""

from env_server.domain import ScenarioFamily
from env_server.domains.insurance.families.accounts import identity_then_change
from env_server.domains.insurance.families.analytics import billing_book, claims_book
from env_server.domains.insurance.families.billing import instalment_plan, reinstate_lapsed
from env_server.domains.insurance.families.changes import deductible_change, vehicle_swap
from env_server.domains.insurance.families.claims import decide_claim, not_fileable
from env_server.domains.insurance.families.household import change_by_status, exclude_by_state, vehicle_rules

FAMILIES = [
    ScenarioFamily(name="instalment-count", covers=("10.1", "10.2", "10.3", "10.4"), build=instalment_plan),
    ScenarioFamily(name="change-by-status", covers=("2.2", "3.3", "5.5", "12.1"), build=change_by_status),
    ScenarioFamily(name="exclusion-by-state", covers=("3.2", "4.1", "4.2"), build=exclude_by_state),
    ScenarioFamily(name="claim-not-fileable", covers=("7.1", "7.2", "7.3", "7.5"), build=not_fileable),
    ScenarioFamily(name="claim-decision", covers=("7.4", "8.1", "8.2", "8.3"), build=decide_claim),
    ScenarioFamily(
        name="identity-then-change", covers=("1.2", "1.3", "1.4", "14.1", "14.2"), build=identity_then_change
    ),
    ScenarioFamily(name="vehicle-swap", covers=("5.4", "5.5", "1.2"), build=vehicle_swap),
    ScenarioFamily(name="deductible-change", covers=("2.2", "6.1", "6.2"), build=deductible_change),
    ScenarioFamily(name="vehicle-rules", covers=("5.1", "5.2", "5.3", "5.5"), build=vehicle_rules),
    ScenarioFamily(name="reinstate-lapsed", covers=("9.2", "11.1", "11.2"), build=reinstate_lapsed),
    ScenarioFamily(
        name="billing-report", covers=("analytics", "10.2", "11.1"), build=billing_book, kind="analytics"
    ),
    ScenarioFamily(
        name="claims-report", covers=("analytics", "8.1", "8.2"), build=claims_book, kind="analytics"
    ),
]

__all__ = ["FAMILIES"]
