"""The deterministic scripted user: replays `task.user.script`, one line per agent message."""

from __future__ import annotations

from env_server.users.base import STOP_MARK, SimulatedUser, TranscriptMessage, UserTurn
from shared.tasks import Task

#: What the scripted user says when its script has run out; the conversation is over.
END_OF_SCRIPT = STOP_MARK


class ScriptedUser(SimulatedUser):
    """Line k of the script answers the agent's k-th message; after the last line the user is done."""

    kind = "scripted"
    prompt_version = "scripted-v1"

    def opening(self, task: Task, seed: int | None = None) -> UserTurn:
        """The script's first line."""
        return UserTurn(content=task.user.script[0], done=False)

    def reply(
        self, task: Task, transcript: list[TranscriptMessage], writes_this_turn: int, seed: int | None = None
    ) -> UserTurn:
        """The next unused line, or the stop signal once the script is exhausted."""
        said = sum(1 for m in transcript if m.role == "user")
        if said < len(task.user.script):
            return UserTurn(content=task.user.script[said], done=False)
        return UserTurn(content=END_OF_SCRIPT, done=True)
