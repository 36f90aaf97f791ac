"""Refuse episode requests past a worker's in-flight maximum, and reclaim idle episodes in the background.

Plain ASGI middleware, as `ObserveMiddleware`: the refusal costs no routing, no body read and no thread hop,
so a server at capacity answers the excess in microseconds instead of queueing it behind the admitted work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from env_server.api.errors import over_capacity_response
from env_server.episodes.admission import Admission
from env_server.episodes.service import EpisodeService
from env_server.errors import OverCapacityError

log = logging.getLogger(__name__)

#: The requests an in-flight maximum applies to: an episode's own (start, calls, messages, score).
EPISODE_PATHS = "/v1/episodes"
#: Longest wait between two sweeps for idle episodes, whatever the timeout.
SWEEP_EVERY_S = 30.0


class InFlightMiddleware:
    """Counts episode requests in flight on this worker and refuses those past `GROUNDSTATE_MAX_IN_FLIGHT`."""

    def __init__(self, app: ASGIApp, admission: Admission) -> None:
        self.app = app
        self.admission = admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on if there is room, else answer 503 `over-capacity` with `Retry-After`."""
        if scope["type"] != "http" or not scope["path"].startswith(EPISODE_PATHS):
            await self.app(scope, receive, send)
            return
        try:
            self.admission.enter()
        except OverCapacityError as exc:
            await over_capacity_response(exc)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.admission.exit()


@contextlib.asynccontextmanager
async def reclaiming(service: EpisodeService) -> AsyncIterator[None]:
    """While the app runs, reclaim this worker's idle episodes every so often (a quarter of the timeout)."""
    timeout = service.admission.idle_timeout_s
    if not timeout:
        yield
        return

    async def sweep() -> None:
        while True:
            await asyncio.sleep(min(SWEEP_EVERY_S, timeout / 4))
            try:
                await run_in_threadpool(service.reclaim_idle)
            except Exception:  # a store outage must not end the sweeps: the next one tries again
                log.exception("reclaiming idle episodes failed")

    task = asyncio.create_task(sweep())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
