"""Scenario families of the travel domain: `groundstate tasks generate --domain travel` draws from `FAMILIES`.

Each family builds a train task on a fresh passenger and reservation (and fresh flights where a disruption is
needed) and computes its gold actions from the policy with the domain's own figures; `covers` names the
policy rules (R1-R17 of `policy.md`) it exercises.
"""

from env_server.domain import ScenarioFamily
from env_server.domains.travel.families.analytics import commercial_question, operations_question
from env_server.domains.travel.families.changes import (
    basic_no_change,
    change_fee,
    change_quote,
    disruption_rebook,
    identity_then_change,
)
from env_server.domains.travel.families.money import cancel_refund, compensation
from env_server.domains.travel.families.trips import baggage, multi_step, travellers_fixed

FAMILIES: list[ScenarioFamily] = [
    ScenarioFamily(name="change-fee-by-fare", covers=("R1", "R2", "R3"), build=change_fee),
    ScenarioFamily(name="basic-no-change", covers=("R2", "R3"), build=basic_no_change),
    ScenarioFamily(name="disruption-rebook", covers=("R3", "R5", "R6"), build=disruption_rebook),
    ScenarioFamily(name="delay-compensation", covers=("R5", "R9", "R10", "R11"), build=compensation),
    ScenarioFamily(name="cancel-refund", covers=("R7", "R8"), build=cancel_refund),
    ScenarioFamily(name="travellers-fixed", covers=("R4", "R17"), build=travellers_fixed),
    ScenarioFamily(name="baggage-allowance", covers=("R2", "R12"), build=baggage),
    ScenarioFamily(name="identity-then-change", covers=("R1", "R3"), build=identity_then_change),
    ScenarioFamily(name="change-quote", covers=("R2", "R3", "communicate"), build=change_quote),
    ScenarioFamily(
        name="multi-step", covers=("R1", "R3", "R9", "R10", "R11", "R12", "R16"), build=multi_step
    ),
    ScenarioFamily(
        name="analytics-operations", covers=("analytics", "R5"), build=operations_question, kind="analytics"
    ),
    ScenarioFamily(
        name="analytics-commercial",
        covers=("analytics", "R2", "R7", "R12"),
        build=commercial_question,
        kind="analytics",
    ),
]

__all__ = ["FAMILIES"]
