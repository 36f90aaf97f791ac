"""`/v1/episodes`: start an episode, call tools, talk to the simulated user, score, inspect, dispose.

The handlers are `async` and hand the (blocking) episode service to the thread pool themselves: one thread
hop per request, where a plain `def` handler costs two (FastAPI validates its result in another).
"""

from fastapi import APIRouter, Response, status
from starlette.concurrency import run_in_threadpool

from env_server.api.deps import EpisodesDep
from shared.models import (
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


@router.post("", operation_id="episodes-start", status_code=status.HTTP_201_CREATED)
async def start_episode(body: StartEpisodeRequest, episodes: EpisodesDep) -> EpisodeStarted:
    """Start an episode: a fresh sandbox of the task, the policy, the tools and the user's first message."""
    return await run_in_threadpool(episodes.start, body)


@router.post("/{episode_id}/tool_calls", operation_id="episodes-tool-call")
async def call_tool(episode_id: str, body: ToolCallRequest, episodes: EpisodesDep) -> ToolCallResult:
    """Execute one tool in the episode's sandbox. A business refusal comes back as `error`, with HTTP 200."""
    return await run_in_threadpool(episodes.call_tool, episode_id, body)


@router.post("/{episode_id}/messages", operation_id="episodes-message")
async def send_message(episode_id: str, body: MessageRequest, episodes: EpisodesDep) -> UserReply:
    """Send an assistant message to the simulated user and get the reply."""
    return await run_in_threadpool(episodes.message, episode_id, body)


@router.post("/{episode_id}/score", operation_id="episodes-score")
async def score_episode(episode_id: str, episodes: EpisodesDep) -> ScoreResult:
    """End and score the episode (idempotent: scoring again returns the same result)."""
    return await run_in_threadpool(episodes.score, episode_id)


@router.get("/{episode_id}", operation_id="episodes-get")
async def get_episode(episode_id: str, episodes: EpisodesDep) -> EpisodeInfo:
    """The episode's events, state diff so far, and score."""
    return await run_in_threadpool(episodes.info, episode_id)


@router.delete("/{episode_id}", operation_id="episodes-dispose", status_code=status.HTTP_204_NO_CONTENT)
async def dispose_episode(episode_id: str, episodes: EpisodesDep) -> Response:
    """Dispose of the episode's sandbox."""
    await run_in_threadpool(episodes.dispose, episode_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
