"""Deterministic policies: the gold-action oracle (`replay`) and recorded turns played back (`recorded`).

`replay` plays a task's reference solution, fetched from the server with `include_gold=true`: each gold
action as a tool call (analytics tasks: the gold SQL through `sql_query`, then its rows to
`submit_answer`), then one closing message that says every `communicate` item and stops. It is the oracle
baseline of a campaign (what a perfect agent scores: 1 everywhere except tasks whose rubric or user needs
more) and a smoke test of a server, with no model at all.

`recorded:PATH` plays back assistant turns saved as JSON (a list of `Turn` objects, or any object with a
`turns` list, such as a dumped `RolloutResult`): to reproduce an episode against another server or backend,
or after a scorer change. Turn k of the file answers the k-th policy call of an episode; after the last
one the policy stops.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, ValidationError

from shared.strict_model import StrictModel
from shared.tasks import Task
from trainer.policies.base import Message, Policy, PolicySpecError, ToolCall, Turn, new_call_id, parse_options

if TYPE_CHECKING:
    from shared.client import AsyncGroundstateClient
    from shared.models import EpisodeStarted

__all__ = ["RecordedPolicy", "ReplayOptions", "ReplayPolicy"]

_ROWS_OF_LAST_QUERY = object()
"""Placeholder for `submit_answer`'s rows: the rows the previous `sql_query` returned."""


class ReplayOptions(StrictModel):
    """Options of the replay policy."""

    calls_per_turn: int = Field(default=1, ge=1)
    """Gold actions issued per assistant turn (1: one call per turn, like most agents)."""


class ReplayPolicy(Policy):
    """The oracle: plays each task's gold actions, then says its `communicate` items and stops."""

    name = "replay"

    def __init__(self, options: ReplayOptions | None = None) -> None:
        """Create the policy; it fetches each episode's task when bound to it."""
        self.options = options or ReplayOptions()

    @classmethod
    def from_spec(cls, target: str, options: Mapping[str, str]) -> Self:
        """Build from `replay[?calls_per_turn=N]`.

        Raises:
            PolicySpecError: A target was given, or an invalid option.
        """
        if target:
            raise PolicySpecError(f"the replay policy takes no target, got {target!r}: use `replay`")
        return cls(parse_options(ReplayOptions, options, "replay"))

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        """Fetch the task with its gold actions and return a policy bound to it."""
        task = await client.task(episode.task_id, include_gold=True)
        if not isinstance(task, Task):
            raise TypeError(f"the server did not return task {episode.task_id} with its gold actions")
        return _ReplayEpisode(task, self.options.calls_per_turn)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Unusable unbound: the replay needs the episode's task (`for_episode`).

        Raises:
            RuntimeError: Always.
        """
        raise RuntimeError("the replay policy must be bound to an episode first (Policy.for_episode)")


class _ReplayEpisode(Policy):
    """The replay policy bound to one task; stateless beyond the task (progress is read from `messages`)."""

    name = "replay"

    def __init__(self, task: Task, calls_per_turn: int) -> None:
        self.task = task
        self.calls_per_turn = calls_per_turn
        self.plan: list[tuple[str, Any]] = [(a.tool, a.args) for a in task.gold_actions]
        if task.kind == "analytics" and task.analytics is not None:
            self.plan += [
                ("sql_query", {"sql": task.analytics.gold_sql}),
                ("submit_answer", _ROWS_OF_LAST_QUERY),
            ]

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """The next gold actions, or the closing message once all were made."""
        done = sum(len(m.get("tool_calls") or []) for m in messages if m["role"] == "assistant")
        if done < len(self.plan):
            batch = self.plan[done : done + self.calls_per_turn]
            calls = [
                ToolCall(id=new_call_id(), name=name, arguments=self._args(args, messages))
                for name, args in batch
            ]
            return Turn(tool_calls=calls, finish_reason="tool_calls")
        items = self.task.communicate
        text = "All done: " + ". ".join(items) + "." if items else "I have completed your request."
        return Turn(content=text, stop=True, finish_reason="stop")

    @staticmethod
    def _args(args: Any, messages: list[Message]) -> dict[str, Any]:
        if args is not _ROWS_OF_LAST_QUERY:
            return dict(args)
        last = next((m for m in reversed(messages) if m["role"] == "tool"), None)
        try:
            output = json.loads(last["content"]) if last else None
        except json.JSONDecodeError:
            output = None
        return {"rows": output.get("rows", []) if isinstance(output, dict) else []}


class RecordedPolicy(Policy):
    """Plays back recorded turns: turn k of the recording answers the k-th policy call of an episode."""

    def __init__(self, turns: list[Turn], name: str = "recorded") -> None:
        """Create the policy from its turns."""
        self.turns = turns
        self.name = name

    @classmethod
    def from_spec(cls, target: str, options: Mapping[str, str]) -> Self:
        """Build from `recorded:PATH` (a JSON list of turns, or an object with a `turns` list).

        Raises:
            PolicySpecError: No path, an unreadable file, or turns that do not validate.
        """
        if options:
            raise PolicySpecError(f"the recorded policy takes no options, got {', '.join(options)}")
        if not target:
            raise PolicySpecError("the recorded policy needs a file: recorded:PATH")
        path = Path(target)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            raw = data["turns"] if isinstance(data, dict) else data
            turns = TypeAdapter(list[Turn]).validate_python(raw)
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValidationError) as exc:
            raise PolicySpecError(f"cannot read recorded turns from {path}: {exc}") from exc
        return cls(turns, name=f"recorded:{path.name}")

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """The recorded turn for this point of the episode; a stop once the recording is exhausted."""
        index = sum(1 for m in messages if m["role"] == "assistant")
        if index < len(self.turns):
            return self.turns[index]
        return Turn(stop=True, finish_reason="stop")
