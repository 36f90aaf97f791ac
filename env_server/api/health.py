"""`/healthz` and `/metrics`."""

import os

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
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
    """Prometheus metrics of the whole server: all its workers when it runs several, else this process.

    With several workers a scrape reaches any one of them, so `groundstate serve --workers N` points
    `PROMETHEUS_MULTIPROC_DIR` at a directory where every worker writes its values, and this sums them.
    """
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
