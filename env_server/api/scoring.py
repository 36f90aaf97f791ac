"""`/v1/score`: stateless scoring of a submitted trajectory, for evaluators."""

from fastapi import APIRouter

from env_server.api.deps import EpisodesDep
from env_server.api.responses import BODY, COMMON, error_responses
from shared.models import ScoreRequest, TrajectoryScore

router = APIRouter(prefix="/v1", tags=["scoring"])


@router.post("/score", operation_id="scoring-score", responses=error_responses(*COMMON, *BODY, 404))
def score_trajectory(body: ScoreRequest, episodes: EpisodesDep) -> TrajectoryScore:
    """Replay `tool_calls` on a fresh sandbox of the task and score them with `messages`."""
    return episodes.score_trajectory(body)
