"""`/v1/episodes`: start an episode, call tools, talk to the simulated user, score, inspect, dispose."""

from fastapi import APIRouter, Response, status

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
def start_episode(body: StartEpisodeRequest, episodes: EpisodesDep) -> EpisodeStarted:
    """Start an episode: a fresh sandbox of the task, the policy, the tools and the user's first message."""
    return episodes.start(body)


@router.post("/{episode_id}/tool_calls", operation_id="episodes-tool-call")
def call_tool(episode_id: str, body: ToolCallRequest, episodes: EpisodesDep) -> ToolCallResult:
    """Execute one tool in the episode's sandbox. A business refusal comes back as `error`, with HTTP 200."""
    return episodes.call_tool(episode_id, body)


@router.post("/{episode_id}/messages", operation_id="episodes-message")
def send_message(episode_id: str, body: MessageRequest, episodes: EpisodesDep) -> UserReply:
    """Send an assistant message to the simulated user and get the reply."""
    return episodes.message(episode_id, body)


@router.post("/{episode_id}/score", operation_id="episodes-score")
def score_episode(episode_id: str, episodes: EpisodesDep) -> ScoreResult:
    """End and score the episode (idempotent: scoring again returns the same result)."""
    return episodes.score(episode_id)


@router.get("/{episode_id}", operation_id="episodes-get")
def get_episode(episode_id: str, episodes: EpisodesDep) -> EpisodeInfo:
    """The episode's events, state diff so far, and score."""
    return episodes.info(episode_id)


@router.delete("/{episode_id}", operation_id="episodes-dispose", status_code=status.HTTP_204_NO_CONTENT)
def dispose_episode(episode_id: str, episodes: EpisodesDep) -> Response:
    """Dispose of the episode's sandbox."""
    episodes.dispose(episode_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
