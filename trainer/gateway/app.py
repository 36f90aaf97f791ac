"""The model gateway: an OpenAI-compatible chat endpoint per episode that records every call's tokens.

An agent program is given `{gateway}/episodes/{episode_id}/v1` as its model's base URL (and the episode's
MCP endpoint, `{server}/v1/episodes/{episode_id}/mcp`, for its tools), and runs unmodified. Routes:

    POST   /episodes/{episode_id}/v1/chat/completions   one assistant turn (non-streaming), recorded
    GET    /episodes/{episode_id}/v1/models             the model's name
    GET    /episodes/{episode_id}/calls                 the episode's recorded calls (for a trainer)
    DELETE /episodes/{episode_id}/calls                 the same, forgotten by the gateway
    GET    /healthz

The request model ignores fields it does not use (OpenAI clients send many: `store`, `parallel_tool_calls`,
...), but refuses what it cannot honour: `stream: true` and `n` other than 1, each a 400 naming the field.
A model failure is a 503 (`backend-error`): an infrastructure failure, never the agent's.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from trainer.gateway.backend import GatewayBackend
from trainer.gateway.records import CallRecorder, RecordedCall
from trainer.policies.base import Message

__all__ = ["ChatRequest", "create_gateway_app"]


class ChatRequest(BaseModel):
    """The parts of an OpenAI chat-completions request the gateway uses."""

    model_config = ConfigDict(extra="ignore")

    model: str = ""
    messages: list[dict[str, Any]] = Field(min_length=1)
    tools: list[dict[str, Any]] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0)
    stream: bool | None = None
    n: int | None = None


def _error(status: int, code: str, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "field": field}}, status_code=status)


def _text(content: Any) -> str:
    """A message's content as text (a list of parts is joined)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _normalised(messages: list[dict[str, Any]]) -> list[Message]:
    """The messages with text content, as the chat template renders them (`developer` read as `system`)."""
    out: list[Message] = []
    for message in messages:
        role = "system" if message.get("role") == "developer" else message.get("role")
        normal: Message = {**message, "role": role, "content": _text(message.get("content"))}
        out.append(normal)
    return out


def create_gateway_app(backend: GatewayBackend, recorder: CallRecorder | None = None) -> FastAPI:
    """The gateway's app over `backend`, recording into `recorder` (a fresh one if none)."""
    app = FastAPI(title="groundstate model gateway")
    calls = recorder or CallRecorder()
    app.state.recorder = calls

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/episodes/{episode_id}/v1/models")
    async def models(episode_id: str) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": backend.name, "object": "model", "owned_by": "groundstate"}],
        }

    @app.post("/episodes/{episode_id}/v1/chat/completions", response_model=None)
    async def chat(episode_id: str, request: ChatRequest) -> JSONResponse | dict[str, Any]:
        if request.stream:
            return _error(
                400, "invalid-request", "stream: the gateway answers whole completions only", "stream"
            )
        if request.n not in (None, 1):
            return _error(
                400, "invalid-request", f"n: {request.n} completions asked, the gateway gives 1", "n"
            )
        messages, tools = _normalised(request.messages), list(request.tools or [])
        try:
            generation = await backend.generate(
                messages, tools, request.max_completion_tokens or request.max_tokens, request.temperature
            )
        except Exception as exc:
            return _error(503, "backend-error", f"model {backend.name}: {type(exc).__name__}: {exc}")
        turn = generation.turn
        message = turn.message()
        message["content"] = turn.content or None
        finish = "tool_calls" if turn.tool_calls else ("length" if turn.finish_reason == "length" else "stop")
        calls.add(
            RecordedCall(
                episode_id=episode_id,
                index=calls.next_index(episode_id),
                messages=request.messages,
                tools=tools,
                response=message,
                prompt_ids=generation.prompt_ids,
                completion_ids=generation.completion_ids,
                logprobs=generation.logprobs,
                finish_reason=finish,
            )
        )
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": backend.name,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": len(generation.prompt_ids),
                "completion_tokens": len(generation.completion_ids),
                "total_tokens": len(generation.prompt_ids) + len(generation.completion_ids),
            },
        }

    @app.get("/episodes/{episode_id}/calls")
    async def recorded(episode_id: str) -> list[RecordedCall]:
        return calls.calls(episode_id)

    @app.delete("/episodes/{episode_id}/calls")
    async def taken(episode_id: str) -> list[RecordedCall]:
        return calls.pop(episode_id)

    return app
