"""An MCP 1.x client (the handshake era) on an episode's endpoint; run with OpenEnv's venv, which has mcp 1.x.

python mcp_legacy_client.py URL EPISODE_ID KEY    ->  one JSON line: protocol, tools, refusal, output
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str, episode_id: str, key: str) -> None:
    endpoint = f"{url}/v1/episodes/{episode_id}/mcp"
    async with streamablehttp_client(endpoint, headers={"Authorization": f"Bearer {key}"}) as (
        read,
        write,
        _,
    ), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        refused = await session.call_tool("get_booking", {"booking_id": "BK-00000"})
        found = await session.call_tool("get_booking", {"booking_id": "BK-20417"})
    print(
        json.dumps(
            {
                "mcp": importlib.metadata.version("mcp"),
                "protocol": init.protocolVersion,
                "tools": [t.name for t in tools.tools],
                "refused": [refused.isError, refused.content[0].text],
                "found": [found.isError, json.loads(found.content[0].text)],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
