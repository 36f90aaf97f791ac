"""An episode's tools over MCP: a task's reference conversation, its calls through the official MCP client.

A complete script that needs only the MCP SDK (`pip install -r examples/requirements-mcp.txt`), not
groundstate: any agent's environment can run it against a server.

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
from typing import Any

import httpx2  # the HTTP client the MCP SDK's transport takes; REST goes through it too
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def _rest(http: httpx2.AsyncClient, method: str, path: str, body: Any = None) -> Any:
    """One REST call; a refusal exits with the server's `{"error": {"code", "message"}}`."""
    response = await http.request(method, path, json=body)
    if response.is_error:
        raise SystemExit(f"{method} {path}: {response.status_code} {response.text}")
    return response.json()


async def play(url: str, task_id: str, api_key: str | None = None) -> dict[str, Any]:
    """Start an episode, play the reference conversation (calls over MCP, messages over REST), score it."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx2.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        reference = await _rest(http, "GET", f"/v1/tasks/{task_id}/reference")
        episode = await _rest(http, "POST", "/v1/episodes", {"task_id": task_id})
        episode_id = episode["episode_id"]
        print(f"episode {episode_id}; the user says: {episode['first_message']}")
        async with Client(
            streamable_http_client(f"{url}/v1/episodes/{episode_id}/mcp", http_client=http)
        ) as mcp:
            tools = await mcp.list_tools()
            print(f"{len(tools.tools)} tools over MCP: {', '.join(t.name for t in tools.tools)}")
            for step in (s for s in reference["steps"] if s["role"] == "assistant"):
                call = step["tool_call"]
                if call is None:
                    message = {"content": step["content"] or ""}
                    reply = await _rest(http, "POST", f"/v1/episodes/{episode_id}/messages", message)
                    print(f"  agent: {step['content']}\n  user: {reply['content']}")
                    continue
                result = await mcp.call_tool(call["name"], call["arguments"])
                text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                mark = "refused" if result.is_error else "ok"
                print(f"  {call['name']}({json.dumps(call['arguments'])}) -> {mark}: {text[:100]}")
        return await _rest(http, "POST", f"/v1/episodes/{episode_id}/score")  # type: ignore[no-any-return]


def main() -> None:
    """Parse the command line, play, and print the score."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--task", default="hotel-corp-modify-approval-001")
    args = parser.parse_args()
    score = asyncio.run(play(args.url.rstrip("/"), args.task, os.environ.get("GROUNDSTATE_API_KEY")))
    print(f"status {score['status']}, reward {score['reward']}")


if __name__ == "__main__":
    main()
