"""`/v1/episodes`: start an episode, call tools, talk to the simulated user, score, inspect, dispose.

The handlers are `async` and hand the (blocking) episode service to the thread pool themselves: one thread
hop per request, where a plain `def` handler costs two (FastAPI validates its result in another). In inline
mode (`GROUNDSTATE_INLINE_CALLS`) a call that only computes runs on the event loop instead, with no hop at
all: on SQLite a call is CPU work under the GIL either way, and the hop, with many threads contending for
the GIL, cost more than a third of the server's throughput (`benchmarks/floor.py`).
"""

import time
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Response, status
from starlette.concurrency import run_in_threadpool

from env_server.api.deps import EpisodesDep
from env_server.api.responses import BODY, COMMON, error_responses
from env_server.episodes.admission import QUEUED
from env_server.episodes.blame import blame_episode
from env_server.episodes.service import EpisodeService
from shared.models import (
    BlameResult,
    EpisodeInfo,
    EpisodeStarted,
    MessageRequest,
    ScoreResult,
    StartEpisodeRequest,
    ToolCallRequest,
    ToolCallResult,
    UserReply,
)

router = APIRouter(prefix="/v1/episodes", tags=["episodes"])
T = TypeVar("T")


async def _served(
    episodes: EpisodeService,
    episode_id: str,
    call: Callable[..., T],
    *args: Any,
    talks: bool = False,
    scores: bool = False,
) -> T:
    """Run an episode's call here when the service says it only computes, else in a worker thread."""
    with episodes.claim(episode_id, talks=talks, scores=scores) as here:
        if here:
            return call(episode_id, *args)
    return await _in_thread(call, episode_id, *args)


async def _in_thread(call: Callable[..., T], *args: Any) -> T:
    """Run `call` on a worker thread, recording how long it waited for one (`groundstate_queue_seconds`)."""
    queued = time.perf_counter()

    def timed() -> T:
        QUEUED.observe(time.perf_counter() - queued)
        return call(*args)

    return await run_in_threadpool(timed)


@router.post(
    "",
    operation_id="episodes-start",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(*COMMON, *BODY, 404),
)
async def start_episode(body: StartEpisodeRequest, episodes: EpisodesDep) -> EpisodeStarted:
    """Start an episode: a fresh sandbox of the task, the policy, the tools and the user's first message."""
    if episodes.starts_inline(body):
        return episodes.start(body)
    return await _in_thread(episodes.start, body)


@router.post(
    "/{episode_id}/tool_calls",
    operation_id="episodes-tool-call",
    responses=error_responses(*COMMON, *BODY, 404, 409, 410),
)
async def call_tool(episode_id: str, body: ToolCallRequest, episodes: EpisodesDep) -> ToolCallResult:
    """Execute one tool in the episode's sandbox. A business refusal comes back as `error`, with HTTP 200."""
    return await _served(episodes, episode_id, episodes.call_tool, body)


@router.post(
    "/{episode_id}/messages",
    operation_id="episodes-message",
    responses=error_responses(*COMMON, *BODY, 404, 409, 410),
)
async def send_message(episode_id: str, body: MessageRequest, episodes: EpisodesDep) -> UserReply:
    """Send an assistant message to the simulated user and get the reply."""
    return await _served(episodes, episode_id, episodes.message, body, talks=True)


@router.post(
    "/{episode_id}/score", operation_id="episodes-score", responses=error_responses(*COMMON, 404, 410, 422)
)
async def score_episode(episode_id: str, episodes: EpisodesDep) -> ScoreResult:
    """End and score the episode (idempotent: scoring again returns the same result)."""
    return await _served(episodes, episode_id, episodes.score, scores=True)


@router.get("/{episode_id}", operation_id="episodes-get", responses=error_responses(*COMMON, 404, 422))
async def get_episode(episode_id: str, episodes: EpisodesDep) -> EpisodeInfo:
    """The episode's events, state diff so far, and score."""
    return await _served(episodes, episode_id, episodes.info)


@router.get(
    "/{episode_id}/blame", operation_id="episodes-blame", responses=error_responses(*COMMON, 404, 410, 422)
)
async def blame(episode_id: str, episodes: EpisodesDep) -> BlameResult:
    """Whose fault a failed LLM-user episode is (agent, user or undecided), with the evidence.

    Re-scores the stored episode and replays the agent's turns against the scripted user; successes,
    backend errors and scripted-user episodes come back `not-blamed`. A diagnostic: it changes no score.
    """
    return await run_in_threadpool(blame_episode, episodes, episode_id)


@router.delete(
    "/{episode_id}",
    operation_id="episodes-dispose",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(*COMMON, 404, 410, 422),
)
async def dispose_episode(episode_id: str, episodes: EpisodesDep) -> Response:
    """Dispose of the episode's sandbox."""
    await _served(episodes, episode_id, episodes.dispose)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
