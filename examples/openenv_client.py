"""groundstate through OpenEnv's own client: reset to a task, step through its reference conversation.

    groundstate serve &
    python -m venv .venv-openenv && .venv-openenv/bin/pip install -r examples/requirements-openenv.txt
    .venv-openenv/bin/python examples/openenv_client.py [--url http://127.0.0.1:8000] [--task TASK_ID]

OpenEnv's client gets a virtual environment of its own: the `openenv` package pins an older `mcp` than the
server's. This script imports nothing from groundstate. `GROUNDSTATE_API_KEY`, when set, is sent as the
bearer key. The OpenEnv server is at `{url}/openenv`: `reset(task_id=...)` starts an episode; a step is
`{"name": name, "arguments": {...}}`, `{"message": text}` (to the simulated user) or `{"end": true}`; the
final step (the user ends the conversation, or `end`) carries the reward. The agent's side comes from the
task's reference conversation (`GET /v1/tasks/{id}/reference`: the gold calls, asking for identity,
proposing the change and waiting for the user's yes, the report): a real agent would not read it.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx
from openenv import GenericEnvClient


def reference(url: str, task_id: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    """The agent's steps of the task's reference conversation (it holds the gold: not for agents)."""
    response = httpx.get(f"{url}/v1/tasks/{task_id}/reference", headers=headers)
    response.raise_for_status()
    return [s for s in response.json()["steps"] if s["role"] == "assistant"]


def play(url: str, task_id: str, api_key: str | None = None) -> float | None:
    """One episode through OpenEnv's `GenericEnvClient`; returns the final step's reward."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    steps = reference(url, task_id, headers)
    with GenericEnvClient(base_url=f"{url}/openenv", headers=headers).sync() as env:
        result = env.reset(task_id=task_id)
        print(f"episode {result.observation['episode_id']}: {len(result.observation['tools'])} tools")
        print(f"the user says: {result.observation['user_message']}")
        for step in steps:
            if step["tool_call"] is None:
                result = env.step({"message": step["content"]})
                print(f"  agent: {step['content']}\n  user: {result.observation['user_message']}")
            else:
                call = step["tool_call"]
                result = env.step({"name": call["name"], "arguments": call["arguments"]})
                outcome = result.observation["tool_result"] or {}
                print(f"  {call['name']} -> {'refused' if outcome.get('error') else 'ok'}")
            if result.done:
                break
        if not result.done:  # the user has more to say; this agent is finished
            result = env.step({"end": True})
        state = env.state()
        print(f"done after {state['step_count']} steps; checks: {result.observation['score']['checks']}")
        return result.reward


def main() -> None:
    """Parse the command line, play, and print the reward."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--task", default="hotel-corp-modify-approval-001")
    args = parser.parse_args()
    reward = play(args.url.rstrip("/"), args.task, os.environ.get("GROUNDSTATE_API_KEY"))
    print(f"reward {reward}")


if __name__ == "__main__":
    main()
