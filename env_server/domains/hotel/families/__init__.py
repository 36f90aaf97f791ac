"""The hotel domain's scenario families: parameterised builders of train tasks on fresh entities.

Each family draws its guests, bookings, payments (and, when the seed has no hotel left that benchmark tasks
leave alone, a hotel) with `ctx.rng`, and derives its gold actions from the rules of `policy.md` as written
out in `_base`. `covers` names the policy rules a family exercises.
"""

from env_server.domain import ScenarioFamily
from env_server.domains.hotel.families.analytics import guest_history, seed_slice
from env_server.domains.hotel.families.bookings import (
    add_extra,
    cancel_quote,
    cancel_refund,
    change_booking,
    new_booking,
)
from env_server.domains.hotel.families.corporate import approval_on_file, corporate_change
from env_server.domains.hotel.families.service import contact_update, goodwill, multi_request, proxy_refusal

FAMILIES: list[ScenarioFamily] = [
    ScenarioFamily("cancel-refund-by-tier", ("R1", "R3", "R4", "R5", "R6", "R7"), cancel_refund),
    ScenarioFamily("cancel-refund-quote", ("R4", "R5", "R7", "communicate"), cancel_quote),
    ScenarioFamily("change-dates-or-room", ("R1", "R3", "R4", "R6", "R8"), change_booking),
    ScenarioFamily("extras-loyalty", ("R1", "R3", "R11"), add_extra),
    ScenarioFamily("new-booking", ("R1", "R10", "R14"), new_booking),
    ScenarioFamily("corporate-change-approval", ("R2", "R5", "R7", "R8", "R9"), corporate_change),
    ScenarioFamily("approval-on-file", ("R9", "communicate"), approval_on_file),
    ScenarioFamily("goodwill-service-recovery", ("R1", "R12"), goodwill),
    ScenarioFamily("contact-update", ("R1", "R13"), contact_update),
    ScenarioFamily("proxy-caller-refusal", ("R1", "R2"), proxy_refusal),
    ScenarioFamily("multi-request", ("R1", "R5", "R7", "R8", "R11", "R13"), multi_request),
    ScenarioFamily("analytics-guest-history", ("analytics",), guest_history, kind="analytics"),
    ScenarioFamily("analytics-seed-slice", ("analytics",), seed_slice, kind="analytics"),
]

__all__ = ["FAMILIES"]
