"""The travel domain: an airline's contact centre (flights, fares, trips, bags, compensation, miles).

Exports `domain`, registered under the `groundstate.domains` entry point as "travel".
"""

from env_server.domain import Conduct, Domain, GoldAction, volatile
from env_server.domains.travel.families import FAMILIES
from env_server.domains.travel.models import NOW, Base
from env_server.domains.travel.seed import seed
from env_server.domains.travel.tools import TOOLS

domain = Domain.from_package(
    __name__,
    name="travel",
    description="An airline contact centre: flight changes, cancellations and refunds, upgrades, bags, "
    "delay compensation and loyalty miles.",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=TOOLS,
    volatile_columns=volatile(
        identity_verifications=["*"],
        reservations=["cancelled_at", "cancel_reason"],
        payments=["created_at"],
        compensations=["issued_at"],
        supervisor_reviews=["summary", "created_at"],
        mileage_transactions=["created_at"],
        flight_alerts=["created_at"],
    ),
    seed_value=20261001,
    # Policy preamble (a yes before any write tool), rules 1 and 16 (alerts need no verification).
    conduct=Conduct(
        identity_tool="verify_passenger_identity",
        identity_exempt=frozenset({"subscribe_flight_alerts"}),
        confirmation=True,
        # identity details come from the caller, never from the record the agent read
        from_customer={"verify_passenger_identity": ("email", "last_name", "date_of_birth")},
    ),
    # Verification-free and unrelated to every task: an alert on the last flight of the schedule.
    canary_action=GoldAction(
        name="subscribe_flight_alerts",
        arguments={"flight_id": "FL-10322", "channel": "email", "contact": "canary.watch@example.com"},
    ),
    families=FAMILIES,
)

__all__ = ["domain"]
