"""The telecom domain: a carrier's support desk for mobile and home internet, with dual control.

The first domain where the customer acts too: their phone's settings and their home router are tables on
the customer's side (`USER_TABLES`), changed only by the customer's own tools (`USER_TOOLS`: airplane mode,
mobile data, APN, data roaming, restarting and updating the router). The agent diagnoses from the network
side and asks; a task's expected state may need a change only the customer can make.
"""

from env_server.domain import Conduct, Domain, Instruction, volatile
from env_server.domains.telecom.families import FAMILIES
from env_server.domains.telecom.models import NOW, USER_TABLES, Base
from env_server.domains.telecom.seed import seed
from env_server.domains.telecom.tools import TOOLS, USER_TOOLS
from shared.tasks import GoldAction

domain = Domain.from_package(
    __name__,
    name="telecom",
    description="A carrier's support desk for mobile and home internet: troubleshooting with the customer's "
    "own phone and router (dual control), blocked SIMs and lost phones, outages, credits and billing "
    "disputes, roaming and plan changes.",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=TOOLS,
    user_tools=USER_TOOLS,
    user_tables=USER_TABLES,
    # What a customer does whenever told, needed or not: the fixes that leave a trace when they were not
    # the problem (a router restarted during an outage, data roaming switched on at home). Told to switch
    # airplane mode off or mobile data on when it already is, a phone is as it was: those need no entry.
    user_instructions=(
        Instruction(("restart", "router"), "restart_router", {"router_id": "{router_id}"}),
        Instruction(("data roaming",), "set_data_roaming", {"device_id": "{device_id}", "on": True}),
    ),
    families=FAMILIES,
    volatile_columns=volatile(
        identity_verifications=["*"],
        credits=["reason"],
        tickets=["summary", "created_at"],
    ),
    seed_value=20261208,
    # Policy rule 1 (identity before a change on an account; tickets need none) and "How to work" (a yes
    # before a change; a ticket, a record for another team, needs none).
    conduct=Conduct(
        identity_tool="verify_customer",
        identity_exempt=frozenset({"open_ticket"}),
        confirmation=True,
        confirmation_exempt=frozenset({"open_ticket"}),
        # identity details come from the caller, never from the record the agent read
        from_customer={"verify_customer": ("full_name", "pin")},
    ),
    # Verification-free: a ticket on a seeded line no task touches.
    canary_action=GoldAction(
        name="open_ticket", arguments={"line_id": "LN-0399", "category": "other", "summary": "Asked about 5G"}
    ),
)

__all__ = ["domain"]
