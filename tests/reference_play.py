"""The agent's side of a task's reference conversation, played through the client.

Consent is part of the reward: replaying a task's gold calls alone scores 0 wherever the policy asks for the
customer's yes before a change. Tests that need a passing episode play what the server's reference endpoint
says a policy-following agent does (asks, calls, proposes, waits for the yes, reports), step by step.
"""

from __future__ import annotations

from shared.client import GroundstateClient
from shared.models import ReferenceStep, ToolCallResult


def agent_steps(client: GroundstateClient, task_id: str) -> list[ReferenceStep]:
    """The agent's messages and calls of the task's reference conversation, in order."""
    return [s for s in client.reference(task_id).steps if s.role == "assistant"]


def play_step(client: GroundstateClient, episode_id: str, step: ReferenceStep) -> ToolCallResult | None:
    """One agent step: the call's result, or None for a message."""
    if step.tool_call is not None:
        return client.call_tool(episode_id, step.tool_call.name, step.tool_call.arguments)
    client.send_message(episode_id, step.content or "")
    return None


def play_reference(client: GroundstateClient, episode_id: str, task_id: str) -> list[ToolCallResult]:
    """Play every agent step of the task's reference conversation; the tool results, in order."""
    played = (play_step(client, episode_id, step) for step in agent_steps(client, task_id))
    return [result for result in played if result is not None]
