"""The LLM user: a chat model behind any OpenAI-compatible endpoint plays the task's customer.

One reply, step by step:

1. If the model has already written `max_user_turns` messages, stop (done, no request).
2. Build the prompt from the task's persona, goal, known/unknown info and instructions, plus the
   transcript mirrored so the model speaks as the customer (`env_server.users.prompt`).
3. Ask the endpoint (retries with backoff; any failure is a `BackendError`).
4. In a dual-control task (the episode hands a `UserSide` with tools), the request carries the user tools
   (`tools=[...]`, `tool_choice: "auto"`); while the model calls them (at most `MAX_USER_CALLS` calls per
   reply), each call runs on the customer's side, its result goes back to the model as a `tool` message,
   and the model is asked again. The last request of a reply sends no tools, so the model ends in words; a
   blank reply to a request with tools is no call (llama-cpp-python's `chatml-function-calling` answers
   so when the model chooses words), and the words are asked for without tools.
   With `tool_choice="guided"` the script decides instead: on the turn whose script line acts (and was
   told its `when_told` terms), each of the line's tools is forced by name and the model writes the
   arguments; on other turns it only talks.
5. A reply carrying the stop token ends the conversation, unless the agent's last message announced a
   write it has not made this turn: then the user nudges the agent to go ahead instead.

Tool schemas go to the model with string and list bounds capped at `LLAMA_CPP_SCHEMA_BOUND`
(`shared.schema_bounds`): llama.cpp's grammar engine, which constrains a call's arguments to the schema,
crashes the server on a bound of about 2,000 or more (the domains' bound is 4,000). The sandbox still
checks the tool's own bounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from env_server.llm.endpoint import ChatEndpoint, LLMEndpoint, MalformedOutput, ModelToolCall
from env_server.users.base import SimulatedUser, TranscriptMessage, UserSide, UserTurn
from env_server.users.prompt import (
    NUDGE,
    PROMPT_VERSION,
    STOP_TOKEN,
    act_result,
    build_messages,
    parse_reply,
    premature_stop,
)
from env_server.users.scripted import due_actions
from shared.models import ToolCallResult
from shared.schema_bounds import LLAMA_CPP_SCHEMA_BOUND, bounded
from shared.tasks import Task

#: The most user-tool calls one reply may make: a model looping on its tools still answers in words.
MAX_USER_CALLS = 4
#: How the user calls its tools: the model decides (`auto`), or the script does (`guided`).
ToolChoice = Literal["auto", "guided"]


class LLMUser(SimulatedUser):
    """A simulated customer played by a chat model; stateless between calls, safe to share across episodes."""

    kind = "llm"
    prompt_version = PROMPT_VERSION
    waits = True

    def __init__(
        self, endpoint: LLMEndpoint, *, max_user_turns: int = 12, tool_choice: ToolChoice = "auto"
    ) -> None:
        """Configure the user (no request is made yet).

        Args:
            endpoint: the chat endpoint and sampling settings.
            max_user_turns: the most messages the model writes in one episode, opening included; the
                agent's next message after the last of them is answered by the stop signal.
            tool_choice: who decides the customer's tool calls in a dual-control task: the model
                (`auto`) or the task's script (`guided`, recorded as prompt version `...+guided`).

        Raises:
            ValueError: `max_user_turns` is below 1, or `tool_choice` is neither `auto` nor `guided`.
        """
        if max_user_turns < 1:
            raise ValueError(f"max_user_turns must be at least 1, got {max_user_turns}")
        if tool_choice not in ("auto", "guided"):
            raise ValueError(f"tool_choice must be 'auto' or 'guided', got {tool_choice!r}")
        self.endpoint = endpoint
        self.model = endpoint.model
        self.max_user_turns = max_user_turns
        self.tool_choice = tool_choice
        self.prompt_version = PROMPT_VERSION if tool_choice == "auto" else f"{PROMPT_VERSION}+guided"
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
        self,
        task: Task,
        transcript: list[TranscriptMessage],
        writes_this_turn: int,
        seed: int | None = None,
        side: UserSide | None = None,
    ) -> UserTurn:
        """The customer's answer to the agent's last message, after any calls on its own side.

        Args:
            task: the task being played.
            transcript: the conversation so far, oldest first, ending with the agent's message.
            writes_this_turn: successful write tool calls since the user's previous message.
            seed: the episode's sampling seed; None uses the endpoint's configured seed.
            side: the customer's side; when it has tools, the model may call them (see the module).

        Returns:
            The reply; `done` when the model stopped (and the stop was not premature) or the turn cap is
            reached. The stop token is stripped; a bare stop leaves `content` equal to `STOP_TOKEN`.

        Raises:
            BackendError: the endpoint failed (connection, timeout, 5xx, blank output after retries).
        """
        said = sum(1 for m in transcript if m.role == "user")
        if said >= self.max_user_turns:
            return UserTurn(content=STOP_TOKEN, done=True)
        tools = [bounded(t, LLAMA_CPP_SCHEMA_BOUND) for t in side.tools()] if side is not None else []
        forced = [a.name for a in due_actions(task, transcript)] if self.tool_choice == "guided" else []
        acting = bool(tools) and (self.tool_choice == "auto" or bool(forced))
        messages = build_messages(task.user, transcript, acting=acting)
        if acting and side is not None and forced:
            content, stopped = self._guided(messages, tools, forced, side, seed)
        elif acting and side is not None:
            content, stopped = self._act_then_speak(messages, tools, side, seed)
        else:
            content, stopped = self._chat.complete(messages, parse_reply, seed=seed)
        if stopped:
            last = transcript[-1].content if transcript and transcript[-1].role == "assistant" else ""
            if premature_stop(last, writes_this_turn):
                return UserTurn(content=NUDGE, done=False)
        return UserTurn(content=content or STOP_TOKEN, done=stopped)

    def _act_then_speak(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], side: UserSide, seed: int | None
    ) -> tuple[str, bool]:
        """Let the model call its tools (each run on `side`, its result fed back) until it speaks."""
        calls_made = 0
        words_only = False
        while True:
            offered = tools if calls_made < MAX_USER_CALLS and not words_only else []
            parse = _parse_acting if offered else _parse_turn
            text, calls = self._chat.complete_turn(messages, offered, parse, seed=seed)
            if not calls:
                if text.strip():
                    return parse_reply(text)
                words_only = True  # a blank reply to the tools: no call; ask for the words alone
                continue
            calls = calls[: MAX_USER_CALLS - calls_made]
            _run_calls(messages, text, calls, side)
            calls_made += len(calls)

    def _guided(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        names: list[str],
        side: UserSide,
        seed: int | None,
    ) -> tuple[str, bool]:
        """Force one call of each tool in `names`, in order (the model writes the arguments), then speak."""
        for name in names:
            choice = {"type": "function", "function": {"name": name}}
            text, calls = self._chat.complete_turn(
                messages, tools, _forced(name), seed=seed, tool_choice=choice
            )
            _run_calls(messages, text, calls, side)
        text, _ = self._chat.complete_turn(messages, [], _parse_turn, seed=seed)
        return parse_reply(text)

    def close(self) -> None:
        """Close the endpoint's HTTP connections."""
        self._chat.close()


def _opening_text(text: str) -> str:
    content, _ = parse_reply(text)
    if not content:
        raise MalformedOutput("the opening line was only a stop")
    return content


def _parse_turn(text: str, calls: list[ModelToolCall]) -> tuple[str, list[ModelToolCall]]:
    """A turn is tool calls (text optional) or words: a blank reply without calls is retried."""
    if not calls:
        parse_reply(text)  # raises MalformedOutput for a blank reply
    return text, calls


def _parse_acting(text: str, calls: list[ModelToolCall]) -> tuple[str, list[ModelToolCall]]:
    """A reply to a request with tools: calls, words, or blank (no call; the words are asked for next)."""
    return text, calls


def _forced(name: str) -> Callable[[str, list[ModelToolCall]], tuple[str, list[ModelToolCall]]]:
    """The parse of a reply whose `tool_choice` named `name`: its first call of `name`, else a retry."""

    def parse(text: str, calls: list[ModelToolCall]) -> tuple[str, list[ModelToolCall]]:
        named = [c for c in calls if c.name == name]
        if not named:
            raise MalformedOutput(f"tool_choice named {name} but the reply did not call it")
        return text, named[:1]

    return parse


def _run_calls(messages: list[dict[str, Any]], text: str, calls: list[ModelToolCall], side: UserSide) -> None:
    """Run `calls` on `side`, appending them and their results to the model's messages."""
    messages.append(
        {
            "role": "assistant",
            "content": text,  # "" rather than null, which llama-cpp-python's server refuses
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in calls
            ],
        }
    )
    for call in calls:
        result = _run(side, call)
        messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": act_result(result.output, result.error)}
        )


def _run(side: UserSide, call: ModelToolCall) -> ToolCallResult:
    """Run the model's call on the customer's side; arguments that are not a JSON object are its error.

    Such a call never reaches the side (nothing could run, nothing is recorded): the model reads the error
    and may try again.
    """
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCallResult(name=call.name, error="the arguments are not a JSON object; nothing was done")
    return side.act(call.name, arguments)
