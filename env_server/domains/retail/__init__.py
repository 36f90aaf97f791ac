"""The retail domain: Voltline, an online electronics shop's customer support desk.

Orders, cancellations, returns and refunds, delivery delays and lost parcels, price protection, warranty
claims and promo codes, for customers in four membership tiers. Tables in `models.py`, fixed reference data
in `catalog.py`, the seed in `seed.py`, tools by business area in `tools/`, the agent's manual in
`policy.md`, and one YAML file per task in `tasks/`.
"""

from env_server.domain import Conduct, Domain, volatile
from env_server.domains.retail.catalog import NOW
from env_server.domains.retail.families import FAMILIES
from env_server.domains.retail.models import Base
from env_server.domains.retail.seed import seed
from env_server.domains.retail.tools import TOOLS
from shared.tasks import GoldAction

domain = Domain.from_package(
    __name__,
    name="retail",
    description="An online electronics shop's support desk: orders, returns and refunds, delivery delays, "
    "lost parcels, price protection, warranty claims and promo codes.",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=TOOLS,
    families=FAMILIES,
    volatile_columns=volatile(
        identity_verifications=["*"],
        refunds=["created_at"],
        returns=["created_at"],
        warranty_claims=["description", "created_at"],
        store_credits=["created_at"],
        support_tickets=["summary", "created_at"],
        approval_requests=["summary", "created_at"],
    ),
    seed_value=20261001,
    # Policy "How to work" (an explicit yes before any change), rules 1 and 16 (tickets without an account).
    conduct=Conduct(
        identity_tool="verify_customer_identity",
        identity_exempt=frozenset({"create_support_ticket"}),
        confirmation=True,
        # identity details come from the caller, never from the record the agent read
        from_customer={"verify_customer_identity": ("email", "zip_code")},
    ),
    # Verification-free (rule 16): a product question about a product no task is about.
    canary_action=GoldAction(
        name="create_support_ticket",
        arguments={
            "category": "product_question",
            "summary": "Asked whether the 4K Streaming Stick supports Dolby Vision.",
            "product_id": "PR-10040",
        },
    ),
)

__all__ = ["domain"]
