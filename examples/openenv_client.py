"""groundstate through OpenEnv's own client: reset to a task, step through its gold actions, read the reward.

    groundstate serve &
    python -m venv .venv-openenv && .venv-openenv/bin/pip install -r examples/requirements-openenv.txt
    .venv-openenv/bin/python examples/openenv_client.py [--url http://127.0.0.1:8000] [--task TASK_ID]

OpenEnv's client gets a virtual environment of its own: the `openenv` package pins an older `mcp` than the
server's. This script imports nothing from groundstate. `GROUNDSTATE_API_KEY`, when set, is sent as the
bearer key. The OpenEnv server is at `{url}/openenv`: `reset(task_id=...)` starts an episode; a step is
`{"tool": name, "arguments": {...}}`, `{"message": text}` (to the simulated user) or `{"end": true}`; the
final step (the user ends the conversation, or `end`) carries the reward.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx
from openenv import GenericEnvClient


def gold_task(url: str, task_id: str, headers: dict[str, str]) -> dict[str, Any]:
    """The task with its gold actions, from the REST catalogue (a real agent would not read these)."""
    response = httpx.get(f"{url}/v1/tasks/{task_id}", params={"include_gold": "true"}, headers=headers)
    response.raise_for_status()
    return response.json()  # type: ignore[no-any-return]


def play(url: str, task_id: str, api_key: str | None = None) -> float | None:
    """One episode through OpenEnv's `GenericEnvClient`; returns the final step's reward."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    task = gold_task(url, task_id, headers)
    with GenericEnvClient(base_url=f"{url}/openenv", headers=headers).sync() as env:
        result = env.reset(task_id=task_id)
        print(f"episode {result.observation['episode_id']}: {len(result.observation['tools'])} tools")
        print(f"the user says: {result.observation['user_message']}")
        for action in task["gold_actions"]:
            result = env.step({"tool": action["tool"], "arguments": action["args"]})
            outcome = result.observation["tool_result"] or {}
            print(f"  {action['tool']} -> {'refused' if outcome.get('error') else 'ok'}")
        result = env.step({"message": " ; ".join(task["communicate"]) or "Done."})
        print(f"the user says: {result.observation['user_message']}")
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
