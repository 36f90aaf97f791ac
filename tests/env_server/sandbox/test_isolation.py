"""Episodes are isolated: 50 concurrent episodes of one task each see only their own writes."""

import asyncio

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.settings import Settings
from shared.client import AsyncGroundstateClient
from tests.live_server import serve

EPISODES = 50


async def _one(client: AsyncGroundstateClient, i: int) -> tuple[int, int, int]:
    started = await client.start_episode("toybank-transfer-001")
    eid = started.episode_id
    await client.call_tool(eid, "set_balance", {"account_id": "AC-0007", "balance_cents": 1000 + i})
    await asyncio.sleep(0)  # let the other episodes write in between
    seen = (await client.call_tool(eid, "get_account", {"account_id": "AC-0007"})).output["balance_cents"]
    transfer = await client.call_tool(
        eid, "transfer", {"source_id": "AC-0001", "target_id": "AC-0002", "amount_cents": 100 + i}
    )
    assert transfer.output == "TR-90001"  # generated IDs are per sandbox
    info = await client.episode(eid)
    changed = {
        d.key: d.actual for d in info.diff if d.kind in ("extra", "wrong") and d.column == "balance_cents"
    }
    await client.dispose(eid)
    return seen, int(changed["AC-0007"]), int(changed["AC-0002"])


def test_fifty_concurrent_episodes_see_only_their_own_writes(
    settings: Settings, toy_registry: DomainRegistry
) -> None:
    async def run(base_url: str) -> list[tuple[int, int, int]]:
        async with AsyncGroundstateClient(base_url) as client:
            return await asyncio.gather(*(_one(client, i) for i in range(EPISODES)))

    with serve(create_app(settings, registry=toy_registry)) as url:
        results = asyncio.run(run(url))
    assert [r[0] for r in results] == [1000 + i for i in range(EPISODES)]
    assert [r[1] for r in results] == [1000 + i for i in range(EPISODES)]
    assert [r[2] for r in results] == [100 + i for i in range(EPISODES)]
