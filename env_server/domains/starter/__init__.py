"""The starter domain: a lending library's desk, small enough for a 135M-parameter model to learn on a CPU.

A curriculum rather than a benchmark: two write tools, a four-line policy and one-line requests, so that
SmolLM2-135M-Instruct solves some tasks before training and `benchmarks/learning.py` can show whether
`groundstate train local` improves it. `train` and `test` tasks use disjoint loans.
"""

from env_server.domain import Domain, collect_tools
from env_server.domains.starter import tools
from env_server.domains.starter.families import FAMILIES
from env_server.domains.starter.models import NOW, Base
from env_server.domains.starter.seed import seed
from shared.tasks import GoldAction

domain = Domain.from_package(
    __name__,
    name="starter",
    description="A lending library's desk: renew loans, check books back in (a curriculum for small models).",
    metadata=Base.metadata,
    seed=seed,
    now=NOW,
    tools=collect_tools(tools),
    seed_value=20261102,
    canary_action=GoldAction(name="renew_loan", arguments={"loan_id": "L-1998"}),
    families=FAMILIES,
    benchmark=False,  # a curriculum: left out of headline figures unless named
)

__all__ = ["domain"]
