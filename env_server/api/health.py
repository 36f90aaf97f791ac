"""`/healthz` and `/metrics`."""

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from env_server.api.deps import EpisodesDep

router = APIRouter(tags=["health"])


@router.get("/healthz", operation_id="health-check")
def healthz(episodes: EpisodesDep) -> dict[str, str]:
    """Liveness and readiness: the store answers."""
    with episodes.store.engine.connect() as conn:
        conn.execute(text("SELECT 1"))
    return {"status": "ok", "sandbox_backend": episodes.sandboxes.backend}


@router.get("/metrics", operation_id="health-metrics")
def metrics() -> Response:
    """Prometheus metrics of this worker."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
