"""The trainer's side of a gateway episode: score it on the server and turn its calls into samples.

The infrastructure-failure contract of our own loops holds here too: when the server cannot score the
episode (unreachable, `backend_error`), the episode's samples carry no reward and are masked out of
training; only a scored episode's reward (1 or 0) is trained on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from shared.client import AsyncGroundstateClient
from shared.errors import ClientError
from shared.strict_model import StrictModel
from trainer.gateway.records import RecordedCall
from trainer.gateway.samples import TokenSample, samples_from_calls

__all__ = ["GatewayEpisode", "collect_episode"]


class GatewayEpisode(StrictModel):
    """A finished gateway episode: its status, reward and samples."""

    episode_id: str
    status: Literal["scored", "backend_error"]
    reward: float | None = None
    """1.0 or 0.0 when scored; null for a backend error (every sample is then masked)."""
    error: str | None = None
    samples: list[TokenSample] = Field(default_factory=list)


async def collect_episode(
    client: AsyncGroundstateClient, episode_id: str, calls: list[RecordedCall]
) -> GatewayEpisode:
    """Score the episode (idempotent on the server) and build its samples.

    Raises:
        ApiError: The server refused for a reason retrying cannot fix (an unknown episode, bad credentials).
    """
    try:
        score = await client.score(episode_id)
    except ClientError as exc:
        if not exc.retriable:
            raise
        return GatewayEpisode(
            episode_id=episode_id,
            status="backend_error",
            error=f"server: {exc}",
            samples=samples_from_calls(calls, None),
        )
    if score.status == "backend_error" or score.reward is None:
        return GatewayEpisode(
            episode_id=episode_id,
            status="backend_error",
            error=score.error,
            samples=samples_from_calls(calls, None),
        )
    reward = float(score.reward)
    return GatewayEpisode(
        episode_id=episode_id, status="scored", reward=reward, samples=samples_from_calls(calls, reward)
    )
