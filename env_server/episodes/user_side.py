"""The customer's side of a live episode: the simulated user's tool calls, run in the episode's sandbox.

In a dual-control task the customer acts on their own side (restarts the router, turns airplane mode off)
when the agent asks. Those calls run in the same sandbox as the agent's, so the final state holds both
sides, and each is recorded as a `user_tool_call` event: an environment event, like the customer's words,
that replay re-runs in order with the agent's calls and that the agent never sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from env_server.domain import Instruction, Tool
from env_server.errors import InvalidRequestError
from env_server.execution import run_tool
from env_server.sandbox import Sandbox
from env_server.store import Store
from env_server.store.events import UserToolCallEvent
from shared.models import ToolCallResult


@dataclass
class EpisodeUserSide:
    """A `UserSide` bound to one episode: its user tools, its sandbox (fetched on first use) and its log."""

    episode_id: str
    user_tools: dict[str, Tool]
    store: Store
    sandbox_of: Callable[[], Sandbox]
    instructions: Sequence[Instruction] = ()
    calls: int = field(default=0, init=False)

    def tools(self) -> list[dict[str, Any]]:
        """The user tools as OpenAI `tools` entries."""
        return [t.openai_schema() for t in self.user_tools.values()]

    def act(self, name: str, arguments: dict[str, Any]) -> ToolCallResult:
        """Run one user-tool call and record it; a call that cannot run is recorded with its error.

        Raises:
            BackendError: the sandbox database failed (the episode then ends as a backend error).
        """
        sandbox = self.sandbox_of()
        try:
            result = run_tool(sandbox, self.user_tools, name, arguments)
        except InvalidRequestError as exc:  # unknown user tool, bad arguments: nothing ran
            result = ToolCallResult(name=name, error=exc.message)
        event = UserToolCallEvent.of(name, arguments, result.output, result.error)
        sandbox.applied_seq = self.store.append_event(self.episode_id, event)
        self.calls += 1
        return result
