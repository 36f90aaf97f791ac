"""`/healthz` and `/metrics`."""

import os
import time

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from env_server.api.deps import EpisodesDep
from env_server.api.responses import error_responses
from env_server.episodes.service import EpisodeService

router = APIRouter(tags=["health"])

#: How long (seconds) a store that answered stays "ready" without being asked again.
STORE_CHECK_VALID_S = 1.0


@router.get("/healthz", operation_id="health-check", responses=error_responses(503))
async def healthz(request: Request, episodes: EpisodesDep) -> dict[str, str]:
    """Liveness and readiness: the store answers.

    The store is asked (`SELECT 1`, in a worker thread: a database that does not answer must not block
    the event loop) at most once a second: a probe within a second of a successful check is answered on
    the event loop, with no thread hop, so probes arriving many times a second (load balancers, every
    replica's client) cost what a no-op route costs. A failure is never remembered, and a request that
    finds the database unavailable ends the window (`mark_store_unchecked`), so an outage is reported by
    the next probe, at the latest one second after the last success.
    """
    state = request.app.state
    if time.monotonic() >= getattr(state, "store_ready_until", 0.0):
        await run_in_threadpool(_ask_store, episodes)
        state.store_ready_until = time.monotonic() + STORE_CHECK_VALID_S
    return {"status": "ok", "sandbox_backend": episodes.sandboxes.backend}


def _ask_store(episodes: EpisodeService) -> None:
    with episodes.store.engine.connect() as conn:
        conn.execute(text("SELECT 1"))


def mark_store_unchecked(request: Request) -> None:
    """Make the next `/healthz` ask the store again (a request just found a database unavailable)."""
    request.app.state.store_ready_until = 0.0


@router.get(
    "/metrics",
    operation_id="health-metrics",
    response_class=PlainTextResponse,  # Prometheus' text format, as the schema says
    responses=error_responses(401),
)
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
