"""The hotel domain: a hotel chain's guest-service desk (bookings, refunds, loyalty, corporate approvals).

This package is the model domain to copy: tables in `models.py`, the seed in `seed.py`, tools by business
area in `tools/`, the agent's manual in `policy.md`, and one YAML file per task in `tasks/`.
"""

from env_server.domain import Conduct, Domain, volatile
from env_server.domains.hotel.families import FAMILIES
from env_server.domains.hotel.models import NOW, Base
from env_server.domains.hotel.seed import seed
from env_server.domains.hotel.tools import TOOLS
from shared.tasks import GoldAction

domain = Domain.from_package(
    __name__,
    name="hotel",
    description="A hotel chain's guest-service desk: bookings, cancellations and refunds, loyalty perks, "
    "corporate approvals and service recovery.",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=TOOLS,
    families=FAMILIES,
    volatile_columns=volatile(
        identity_verifications=["*"],
        bookings=["created_at", "cancelled_at", "cancellation_reason"],
        payments=["created_at"],
        approval_requests=["note", "created_at"],
        support_tickets=["summary", "created_at"],
        loyalty_transactions=["created_at"],
    ),
    seed_value=20261001,
    # Policy "How to work" (an explicit yes before any change) and rule 1 (identity first; tickets need none).
    conduct=Conduct(
        identity_tool="verify_guest_identity",
        identity_exempt=frozenset({"open_support_ticket"}),
        confirmation=True,
        # identity details come from the caller, never from the record the agent read
        from_customer={"verify_guest_identity": ("last_name", "date_of_birth")},
    ),
    # Staff-side and verification-free: a ticket for a seeded guest that no task touches.
    canary_action=GoldAction(
        name="open_support_ticket",
        arguments={"guest_id": "G-1001", "category": "other", "summary": "Asked for a taxi to the airport"},
    ),
)

__all__ = ["domain"]
