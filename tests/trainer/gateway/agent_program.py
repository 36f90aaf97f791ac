"""An agent program as a team would write it with the OpenAI Agents SDK, untouched by groundstate.

Its model is whatever OpenAI-compatible endpoint it is given (here the gateway's URL for the episode), its
tools are the episode's MCP endpoint, and it talks with the customer through the episode's REST routes: it
runs the agent on the conversation, sends the agent's final answer to the customer, and repeats until the
customer is done or the agent has nothing more to say.
"""

from __future__ import annotations

from typing import Any

import httpx
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI


async def run_agent_program(
    model_url: str, mcp_url: str, episode_url: str, instructions: str, first_message: str, max_rounds: int = 5
) -> list[dict[str, Any]]:
    """Serve the customer of one episode; returns the conversation the program kept."""
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=model_url, api_key="unused", max_retries=0)
    async with MCPServerStreamableHttp(params={"url": mcp_url}, cache_tools_list=True) as tools:
        agent = Agent(
            name="desk",
            instructions=instructions,
            model=OpenAIChatCompletionsModel(model="policy", openai_client=client),
            mcp_servers=[tools],
        )
        history: list[Any] = [{"role": "user", "content": first_message}]
        async with httpx.AsyncClient(base_url=episode_url, timeout=60) as http:
            for _ in range(max_rounds):
                result = await Runner.run(agent, history, max_turns=10)
                history = result.to_input_list()
                answer = str(result.final_output or "").strip()
                if not answer:
                    break
                reply = (await http.post("/messages", json={"content": answer})).raise_for_status().json()
                if reply["done"]:
                    break
                history.append({"role": "user", "content": reply["content"]})
    return history
