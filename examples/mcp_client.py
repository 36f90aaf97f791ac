"""An episode's tools over MCP: a task's reference conversation, its calls through the official MCP client.

    groundstate serve &
    python examples/mcp_client.py [--url http://127.0.0.1:8000] [--task hotel-corp-modify-approval-001]

`GROUNDSTATE_API_KEY`, when set, is sent as the bearer key on REST and MCP alike. The episode is started
over REST; its MCP endpoint is `/v1/episodes/{episode_id}/mcp` (Streamable HTTP), where `tools/list` gives
exactly the episode's tools and `tools/call` runs them in its sandbox. Talking to the simulated user and
scoring stay on REST. The agent's side comes from `GET /v1/tasks/{id}/reference` (the gold calls, asking
for identity, proposing the change and waiting for the user's yes, reporting): the consent rule scores a
change made before the user's yes 0. An agent framework would hand the MCP endpoint to its model instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

import httpx2  # the HTTP client the MCP SDK's transport takes (for the bearer header)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from shared.client import AsyncGroundstateClient
from shared.models import ScoreResult


async def play(url: str, task_id: str, api_key: str | None = None) -> ScoreResult:
    """Start an episode, play the reference conversation (calls over MCP, messages over REST), score it."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with AsyncGroundstateClient(url, api_key=api_key) as rest:
        reference = await rest.reference(task_id)
        episode = await rest.start_episode(task_id)
        print(f"episode {episode.episode_id}; the user says: {episode.first_message}")
        endpoint = f"{url}/v1/episodes/{episode.episode_id}/mcp"
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(endpoint, http_client=http)) as mcp,
        ):
            tools = await mcp.list_tools()
            print(f"{len(tools.tools)} tools over MCP: {', '.join(t.name for t in tools.tools)}")
            for step in (s for s in reference.steps if s.role == "assistant"):
                if step.tool_call is None:
                    reply = await rest.send_message(episode.episode_id, step.content or "")
                    print(f"  agent: {step.content}\n  user: {reply.content}")
                    continue
                call = step.tool_call
                result = await mcp.call_tool(call.name, call.arguments)
                text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                mark = "refused" if result.is_error else "ok"
                print(f"  {call.name}({json.dumps(call.arguments)}) -> {mark}: {text[:100]}")
        return await rest.score(episode.episode_id)


def main() -> None:
    """Parse the command line, play, and print the score."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--task", default="hotel-corp-modify-approval-001")
    args = parser.parse_args()
    score = asyncio.run(play(args.url.rstrip("/"), args.task, os.environ.get("GROUNDSTATE_API_KEY")))
    print(f"status {score.status}, reward {score.reward}")


if __name__ == "__main__":
    main()
