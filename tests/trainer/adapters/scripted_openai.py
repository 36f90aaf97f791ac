"""A real OpenAI-compatible chat server whose answers are given in advance: a deterministic model for
adapter and gateway tests (reward paths, not model quality).

`scripted_openai_app(script)` answers `POST /v1/chat/completions` with the script's next text, as JSON or,
when the request asks for it, as a server-sent event stream, and records each request; `GET /v1/models`
names the model. Once the script runs out it answers `###STOP###`, the stop mark our adapters read.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

MODEL = "scripted"


@dataclass
class Script:
    """The texts to answer with, in order, and the requests seen."""

    texts: list[str]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.requests.append(body)
            return self.texts.pop(0) if self.texts else "###STOP###"


def _chunks(text: str, completion_id: str) -> Iterator[str]:
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
    }
    delta = {"role": "assistant", "content": text}
    yield (
        "data: "
        + json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        + "\n\n"
    )
    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    yield "data: " + json.dumps({**base, "choices": [done], "usage": usage}) + "\n\n"
    yield "data: [DONE]\n\n"


def scripted_openai_app(script: Script) -> FastAPI:
    """The app; serve it with `tests.live_server.serve` (its base URL plus `/v1` is the API root)."""
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "tests"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(request: Request) -> JSONResponse | StreamingResponse:
        body = await request.json()
        text = script.next(body)
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        if body.get("stream"):
            return StreamingResponse(_chunks(text, completion_id), media_type="text/event-stream")
        message = {"role": "assistant", "content": text}
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    return app
