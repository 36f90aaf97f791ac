"""One OpenEnv session: the episode behind a WebSocket connection, played through the episode service.

`reset` starts an episode of the chosen task (disposing of an unfinished previous one), `step` runs a tool
call, sends a message to the simulated user or ends, and the final step scores the episode and carries the
reward. The final step is the one where the user ends the conversation or the agent sends `end`.

The agent's own mistakes — an unknown tool, invalid arguments, a message the API refuses — come back in the
observation's `error` and the episode goes on, as the REST rollout feeds them back to the model. A backend
failure is raised (`BackendError`): the caller reports it as an error frame, never as a reward.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import ValidationError

from env_server.episodes.service import EpisodeService
from env_server.errors import InvalidRequestError, UnknownEpisodeError
from shared.models import ErrorBody, MessageRequest, StartEpisodeRequest, ToolCallRequest
from shared.openenv import OpenEnvAction, OpenEnvObservation, OpenEnvReset, OpenEnvState, OpenEnvStep

__all__ = ["EpisodeSession", "SessionError"]


class SessionError(Exception):
    """A step the session cannot take (no episode yet, or the episode is done): the client's to fix."""


class EpisodeSession:
    """The episode of one OpenEnv connection. Blocking: call it from a worker thread."""

    def __init__(self, service: EpisodeService) -> None:
        self.service = service
        self._state = OpenEnvState()

    def reset(self, data: dict[str, Any]) -> OpenEnvStep:
        """Start an episode of `data["task_id"]`; its observation holds the policy, tools and first line."""
        request = OpenEnvReset.model_validate(data)
        self.close()
        started = self.service.start(
            StartEpisodeRequest(task_id=request.task_id, user=request.user, seed=request.seed)
        )
        self._state = OpenEnvState(
            episode_id=started.episode_id, task_id=started.task_id, domain=started.domain
        )
        observation = self._observation(
            system_prompt=started.system_prompt,
            tools=started.tools,
            tool_kinds=started.tool_kinds,
            user_message=started.first_message,
        )
        return OpenEnvStep(observation=observation)

    def step(self, data: dict[str, Any]) -> OpenEnvStep:
        """Take one action; the step that ends the episode scores it and carries the reward."""
        action = OpenEnvAction.model_validate(data)
        episode_id = self._live_episode()
        self._state.step_count += 1
        if action.name is not None:
            call = ToolCallRequest(name=action.name, arguments=action.arguments, call_id=action.call_id)
            try:
                result = self.service.call_tool(episode_id, call)
            except InvalidRequestError as exc:
                return self._mistake(exc.code, exc.message, exc.field)
            return OpenEnvStep(observation=self._observation(tool_result=result))
        if action.message is not None:
            try:
                message = MessageRequest(content=action.message)
            except ValidationError as exc:
                return self._mistake("invalid-request", f"message: {exc.errors()[0]['msg']}", "message")
            reply = self.service.message(episode_id, message)
            if reply.done:
                return self._finish(user_message=reply.content or None, user_done=True)
            return OpenEnvStep(observation=self._observation(user_message=reply.content))
        return self._finish()

    def state(self) -> OpenEnvState:
        """The session's episode and progress."""
        return self._state.model_copy()

    def close(self) -> None:
        """Dispose of an unfinished episode's sandbox (a scored one keeps its record for REST)."""
        if self._state.episode_id is None or self._state.done:
            return
        with contextlib.suppress(UnknownEpisodeError):  # disposed of over REST meanwhile
            self.service.dispose(self._state.episode_id)
        self._state.done = True

    def _live_episode(self) -> str:
        if self._state.episode_id is None:
            raise SessionError("no episode yet: call reset(task_id=...) first")
        if self._state.done:
            raise SessionError(
                f"episode {self._state.episode_id} is done: call reset(task_id=...) for a new one"
            )
        return self._state.episode_id

    def _finish(self, **fields: Any) -> OpenEnvStep:
        score = self.service.score(self._live_episode())
        reward = None if score.reward is None else float(score.reward)
        self._state.done, self._state.reward = True, reward
        return OpenEnvStep(observation=self._observation(score=score, **fields), reward=reward, done=True)

    def _mistake(self, code: str, message: str, field: str | None) -> OpenEnvStep:
        error = ErrorBody(code=code, message=message, field=field)
        return OpenEnvStep(observation=self._observation(error=error))

    def _observation(self, **fields: Any) -> OpenEnvObservation:
        state = self._state
        assert state.episode_id is not None and state.task_id is not None and state.domain is not None
        return OpenEnvObservation(
            episode_id=state.episode_id, task_id=state.task_id, domain=state.domain, **fields
        )
