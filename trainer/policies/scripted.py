"""Deterministic policies: the gold-action oracle (`replay`) and recorded turns played back (`recorded`).

`replay` plays the agent's side of a task's reference conversation (`GET /v1/tasks/{id}/reference`): it
asks for the caller's identity, makes the gold calls, tells the task's reference reply or proposes the
change, waits for the user's answer, makes the changes and reports, exactly as validation proves scores 1
with the scripted user (analytics tasks: the gold SQL through `sql_query`, then its rows to
`submit_answer`). It is the oracle baseline of a campaign (what a perfect agent scores: 1 everywhere except
tasks whose rubric or LLM user needs more) and a smoke test of a server, with no model at all.

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
from trainer.policies.base import Message, Policy, PolicySpecError, ToolCall, Turn, new_call_id, parse_options

if TYPE_CHECKING:
    from shared.client import AsyncGroundstateClient
    from shared.models import EpisodeStarted, ReferenceStep

__all__ = ["RecordedPolicy", "ReplayOptions", "ReplayPolicy"]


class ReplayOptions(StrictModel):
    """Options of the replay policy."""

    calls_per_turn: int = Field(default=1, ge=1)
    """Gold actions issued per assistant turn (1: one call per turn, like most agents)."""


class ReplayPolicy(Policy):
    """The oracle: plays the agent's side of each task's reference conversation."""

    name = "replay"

    def __init__(self, options: ReplayOptions | None = None) -> None:
        """Create the policy; it fetches each episode's reference conversation when bound to it."""
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
        """Fetch the task's reference conversation and return a policy bound to it."""
        reference = await client.reference(episode.task_id)
        agent = [s for s in reference.steps if s.role == "assistant"]
        return _ReplayEpisode(agent, self.options.calls_per_turn)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Unusable unbound: the replay needs the episode's task (`for_episode`).

        Raises:
            RuntimeError: Always.
        """
        raise RuntimeError("the replay policy must be bound to an episode first (Policy.for_episode)")


class _ReplayEpisode(Policy):
    """The replay policy bound to one task; stateless beyond its steps (progress is read from `messages`)."""

    name = "replay"

    def __init__(self, steps: list[ReferenceStep], calls_per_turn: int) -> None:
        self.steps = steps
        self.calls_per_turn = calls_per_turn

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """The next calls (up to `calls_per_turn` in a row) or the next message; a stop after the last."""
        done = sum(
            len(m.get("tool_calls") or []) + int(bool(m.get("content")))
            for m in messages
            if m["role"] == "assistant"
        )
        if done >= len(self.steps):
            return Turn(stop=True, finish_reason="stop")
        step = self.steps[done]
        last = done == len(self.steps) - 1
        if step.tool_call is None:
            return Turn(content=step.content or "", stop=last, finish_reason="stop")
        calls = []
        for later in self.steps[done : done + self.calls_per_turn]:
            if later.tool_call is None:
                break
            call = later.tool_call
            calls.append(ToolCall(id=new_call_id(), name=call.name, arguments=call.arguments))
        return Turn(tool_calls=calls, stop=done + len(calls) == len(self.steps), finish_reason="tool_calls")


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
