"""`/openenv`: an OpenEnv environment server over groundstate's episodes.

An OpenEnv client is pointed at `http://host:8000/openenv`: it opens the WebSocket `/openenv/ws` (one
connection, one session, one episode at a time) and may read `/openenv/health`, `/openenv/schema` and
`/openenv/metadata`. Every frame is answered by the episode service in the thread pool; closing or
dropping the connection disposes of an unfinished episode.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from env_server.episodes.service import EpisodeService
from env_server.openenv.protocol import answer
from env_server.openenv.session import EpisodeSession
from shared.openenv import OpenEnvAction, OpenEnvObservation, OpenEnvReset, OpenEnvState

__all__ = ["router"]

router = APIRouter(prefix="/openenv", tags=["openenv"])

DESCRIPTION = (
    "Sandboxed business databases (hotel, retail, travel, insurance) for tool-using agents: "
    "reset(task_id=...) starts an episode of a task; step({tool, arguments}) runs a tool, step({message}) "
    "talks to the simulated user, step({end: true}) ends; the final step's reward is 1 iff the database "
    "state the agent left is the expected one (and required facts were said)."
)


@router.get("/health", operation_id="openenv-health")
async def health() -> dict[str, str]:
    """OpenEnv's health check (open without the API key, like `/healthz`)."""
    return {"status": "healthy"}


@router.get("/metadata", operation_id="openenv-metadata")
async def metadata() -> dict[str, Any]:
    """OpenEnv's environment metadata."""
    return {"name": "groundstate", "description": DESCRIPTION, "version": "0.1.0", "author": "groundstate"}


@router.get("/schema", operation_id="openenv-schema")
async def schema() -> dict[str, Any]:
    """JSON schemas of the step action, the observation, the state and reset's arguments."""
    return {
        "action": OpenEnvAction.model_json_schema(),
        "observation": OpenEnvObservation.model_json_schema(),
        "state": OpenEnvState.model_json_schema(),
        "reset": OpenEnvReset.model_json_schema(),
    }


@router.websocket("/ws")
async def session(websocket: WebSocket) -> None:
    """One OpenEnv session: reset, step, state and close frames, each answered by one frame."""
    service: EpisodeService = websocket.app.state.episodes
    max_bytes: int = websocket.app.state.settings.max_request_bytes
    episode = EpisodeSession(service)
    await websocket.accept()
    try:
        while True:
            reply = await run_in_threadpool(answer, episode, await websocket.receive_text(), max_bytes)
            if reply is None:
                await websocket.close()
                break
            await websocket.send_text(json.dumps(reply))
    except WebSocketDisconnect:
        pass
    finally:
        await run_in_threadpool(episode.close)
