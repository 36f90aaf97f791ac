"""The auto-insurance domain: policyholders calling about policies, vehicles, drivers, billing and claims."""

from env_server.domain import Conduct, Domain, volatile
from env_server.domains.insurance.families import FAMILIES
from env_server.domains.insurance.models import NOW, Base
from env_server.domains.insurance.seed import seed
from env_server.domains.insurance.tools import TOOLS
from shared.tasks import GoldAction

#: A valid write on an entity no task touches (customer CU-10160 is reserved for it): validation appends it
#: to every gold trajectory to prove that an extra side effect costs the reward. Tickets need no identity
#: check, so the call succeeds on its own.
CANARY_ACTION = GoldAction(
    name="create_support_ticket",
    arguments={
        "customer_id": "CU-10160",
        "category": "general",
        "priority": "low",
        "subject": "Does my policy include roadside assistance?",
        "description": "Asked whether towing is covered; answered on the call.",
    },
)

domain = Domain.from_package(
    __name__,
    name="insurance",
    description="Personal auto insurance: policies, vehicles, drivers, billing, instalment plans and claims.",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=TOOLS,
    volatile_columns=volatile(
        identity_verifications=["*"],  # per-conversation checks: never part of the outcome
        support_tickets=["subject", "description", "created_at"],
        claims=["description"],
    ),
    seed_value=20261001,
    # Conduct ("yes" before any change) and rule 1.2 (every write but create_support_ticket needs identity).
    conduct=Conduct(
        identity_tool="verify_customer_identity",
        identity_exempt=frozenset({"create_support_ticket"}),
        confirmation=True,
        # identity details come from the caller, never from the record the agent read
        from_customer={"verify_customer_identity": ("date_of_birth", "zip_code")},
    ),
    canary_action=CANARY_ACTION,
    families=FAMILIES,
)

__all__ = ["domain"]
