"""`/v1/judge`: the rubric judge on its own, for evaluators who score transcripts themselves."""

from fastapi import APIRouter

from env_server.api.deps import EpisodesDep
from env_server.api.responses import BODY, COMMON, error_responses
from env_server.errors import JudgeNotConfiguredError
from shared.judge import JudgeRequest, JudgeResponse

router = APIRouter(prefix="/v1", tags=["judge"])


@router.post("/judge", operation_id="judge-ask", responses=error_responses(*COMMON, *BODY))
def ask_judge(body: JudgeRequest, episodes: EpisodesDep) -> JudgeResponse:
    """Answer yes/no questions about the agent's messages in `transcript` (503 if the endpoint fails)."""
    judge = episodes.scorer.judge
    if judge is None:
        raise JudgeNotConfiguredError(
            "this server has no judge: set GROUNDSTATE_JUDGE_BASE_URL and GROUNDSTATE_JUDGE_MODEL"
        )
    verdicts = judge.ask(body.transcript, body.questions, body.state_diff)
    return JudgeResponse(verdicts=list(verdicts), model=judge.model, prompt_version=judge.prompt_version)
