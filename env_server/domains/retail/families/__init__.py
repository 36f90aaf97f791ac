"""Scenario families of the retail domain: parameterised builders of training tasks.

Each family draws a fresh customer and orders (IDs from `ctx.new_id`), takes products and promotions that no
benchmark task mentions, and computes the gold trajectory from the policy rules it names in `covers`
(rule numbers of `policy.md`; "analytics" for the SQL questions). `groundstate tasks generate --domain
retail` validates every draw like a hand-written task and keeps the valid ones.
"""

from env_server.domain import ScenarioFamily
from env_server.domains.retail.families.analytics import account_report, shop_report
from env_server.domains.retail.families.money import delay_compensation, lost_parcel, price_protection
from env_server.domains.retail.families.orders import address_change, cancel_order, multi_step, promo_code
from env_server.domains.retail.families.returns import return_approval, return_fee, return_window
from env_server.domains.retail.families.warranty import warranty_claim

FAMILIES: list[ScenarioFamily] = [
    ScenarioFamily(name="delay-compensation", covers=("R1", "R9"), build=delay_compensation),
    ScenarioFamily(name="return-fee-by-tier", covers=("R1", "R5", "R6", "R7"), build=return_fee),
    ScenarioFamily(name="return-window", covers=("R5",), build=return_window),
    ScenarioFamily(name="return-approval", covers=("R6", "R8"), build=return_approval),
    ScenarioFamily(name="cancel-order", covers=("R1", "R3"), build=cancel_order),
    ScenarioFamily(name="address-change", covers=("R1", "R2", "R4"), build=address_change),
    ScenarioFamily(name="promo-code", covers=("R15",), build=promo_code),
    ScenarioFamily(name="price-protection", covers=("R7", "R10"), build=price_protection),
    ScenarioFamily(name="lost-parcel", covers=("R7", "R8", "R13"), build=lost_parcel),
    ScenarioFamily(name="warranty-claim", covers=("R5", "R11", "R12"), build=warranty_claim),
    ScenarioFamily(name="multi-step", covers=("R1", "R3", "R4", "R5", "R6", "R9"), build=multi_step),
    ScenarioFamily(name="shop-report", covers=("analytics",), build=shop_report, kind="analytics"),
    ScenarioFamily(name="account-report", covers=("analytics",), build=account_report, kind="analytics"),
]

__all__ = ["FAMILIES"]
