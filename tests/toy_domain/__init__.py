"""A tiny bank domain outside the server: the test fixture, and proof that plug-ins need no server edit."""

from datetime import datetime

from env_server.domain import Domain, collect_tools, volatile
from shared.tasks import GoldAction
from tests.toy_domain import families, models, seed, tools

domain = Domain.from_package(
    __name__,
    name="toybank",
    description="A toy bank: accounts and transfers.",
    metadata=models.Base.metadata,
    seed=seed.seed,
    now=datetime(2026, 1, 15, 9, 0),
    tools=collect_tools(tools),
    volatile_columns=volatile(transfers=["memo", "created_at"], tickets=["note"]),
    canary_action=GoldAction(name="freeze_account", arguments={"account_id": "AC-0099"}),
    families=families.FAMILIES,
)
