"""The LLM user: a chat model behind any OpenAI-compatible endpoint plays the task's customer.

One reply, step by step:

1. If the model has already written `max_user_turns` messages, stop (done, no request).
2. Build the prompt from the task's persona, goal, known/unknown info and instructions, plus the
   transcript mirrored so the model speaks as the customer (`env_server.users.prompt`).
3. Ask the endpoint (retries with backoff; any failure is a `BackendError`).
4. A reply carrying the stop token ends the conversation, unless the agent's last message announced a
   write it has not made this turn: then the user nudges the agent to go ahead instead.
"""

from __future__ import annotations

from env_server.llm.endpoint import ChatEndpoint, LLMEndpoint, MalformedOutput
from env_server.users.base import SimulatedUser, TranscriptMessage, UserTurn
from env_server.users.prompt import (
    NUDGE,
    PROMPT_VERSION,
    STOP_TOKEN,
    build_messages,
    parse_reply,
    premature_stop,
)
from shared.tasks import Task


class LLMUser(SimulatedUser):
    """A simulated customer played by a chat model; stateless between calls, safe to share across episodes."""

    kind = "llm"
    prompt_version = PROMPT_VERSION
    waits = True

    def __init__(self, endpoint: LLMEndpoint, *, max_user_turns: int = 12) -> None:
        """Configure the user (no request is made yet).

        Args:
            endpoint: the chat endpoint and sampling settings.
            max_user_turns: the most messages the model writes in one episode, opening included; the
                agent's next message after the last of them is answered by the stop signal.

        Raises:
            ValueError: `max_user_turns` is below 1.
        """
        if max_user_turns < 1:
            raise ValueError(f"max_user_turns must be at least 1, got {max_user_turns}")
        self.endpoint = endpoint
        self.model = endpoint.model
        self.max_user_turns = max_user_turns
        self._chat = ChatEndpoint(endpoint, purpose="simulated-user")

    def opening(self, task: Task, seed: int | None = None) -> UserTurn:
        """The customer's first message, answering the agent's greeting; never ends the conversation.

        Args:
            task: the task being played.
            seed: the episode's sampling seed; None uses the endpoint's configured seed.

        Raises:
            BackendError: the endpoint failed or only ever returned a stop or blank text.
        """
        content = self._chat.complete(build_messages(task.user, []), _opening_text, seed=seed)
        return UserTurn(content=content, done=False)

    def reply(
        self, task: Task, transcript: list[TranscriptMessage], writes_this_turn: int, seed: int | None = None
    ) -> UserTurn:
        """The customer's answer to the agent's last message.

        Args:
            task: the task being played.
            transcript: the conversation so far, oldest first, ending with the agent's message.
            writes_this_turn: successful write tool calls since the user's previous message.
            seed: the episode's sampling seed; None uses the endpoint's configured seed.

        Returns:
            The reply; `done` when the model stopped (and the stop was not premature) or the turn cap is
            reached. The stop token is stripped; a bare stop leaves `content` equal to `STOP_TOKEN`.

        Raises:
            BackendError: the endpoint failed (connection, timeout, 5xx, blank output after retries).
        """
        said = sum(1 for m in transcript if m.role == "user")
        if said >= self.max_user_turns:
            return UserTurn(content=STOP_TOKEN, done=True)
        content, stopped = self._chat.complete(build_messages(task.user, transcript), parse_reply, seed=seed)
        if stopped:
            last = transcript[-1].content if transcript and transcript[-1].role == "assistant" else ""
            if premature_stop(last, writes_this_turn):
                return UserTurn(content=NUDGE, done=False)
        return UserTurn(content=content or STOP_TOKEN, done=stopped)

    def close(self) -> None:
        """Close the endpoint's HTTP connections."""
        self._chat.close()


def _opening_text(text: str) -> str:
    content, _ = parse_reply(text)
    if not content:
        raise MalformedOutput("the opening line was only a stop")
    return content
