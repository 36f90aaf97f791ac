"""Admission control and idle tracking: a worker past its capacity refuses work instead of slowing everyone.

A GRPO step starts thousands of episodes at once. Admitted all together on a server that cannot hold them,
every episode's calls queue behind every other's and the whole step slows (the tool-call p99 grows with the
burst, `benchmarks/grpo_step.py`). Past `GROUNDSTATE_MAX_LIVE_EPISODES` live episodes a start is refused, and
past `GROUNDSTATE_MAX_IN_FLIGHT` requests at once any episode request is: 503 `over-capacity` with
`Retry-After`, which the clients retry after a jittered wait; the episodes admitted keep their latency. The
refusal is taken before any work, so a retried request runs once, and it is never the agent's fault.

The same ledger knows when each live episode was last used: one untouched for `GROUNDSTATE_EPISODE_IDLE_
TIMEOUT_S` (a rollout worker that died, a trainer that moved on) is reclaimed by the service, which frees
its sandbox and keeps its record, marked `reclaimed`.

Counts are per worker process (each has its own ledger): the server's capacity is workers x the setting.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram

from env_server.errors import OverCapacityError

#: Summed over live workers when the server runs several (see `/metrics`).
LIVE_EPISODES = Gauge(
    "groundstate_live_episodes",
    "Episodes started and neither scored, disposed nor reclaimed, held by this server's workers",
    multiprocess_mode="livesum",
)
REFUSED = Counter(
    "groundstate_admissions_refused_total", "Requests refused with 503 over-capacity", ["limit"]
)
RECLAIMED = Counter("groundstate_episodes_reclaimed_total", "Idle episodes reclaimed")
QUEUED = Histogram(
    "groundstate_queue_seconds",
    "Time an episode request waited for a worker thread before its work began",
    buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5),
)


class Admission:
    """This worker's live episodes (with when each was last used) and its requests in flight.

    Args:
        max_live_episodes: Live episodes before a start is refused; 0 for no limit.
        max_in_flight: Episode requests at once before the next is refused; 0 for no limit.
        retry_after_s: The `Retry-After` a refusal carries.
        idle_timeout_s: Unused this long, a live episode is idle (`idle()`); 0 for never.
        clock: Monotonic seconds (a test's clock).
    """

    def __init__(
        self,
        max_live_episodes: int = 0,
        max_in_flight: int = 0,
        retry_after_s: float = 1.0,
        idle_timeout_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_live_episodes = max_live_episodes
        self.max_in_flight = max_in_flight
        self.retry_after_s = retry_after_s
        self.idle_timeout_s = idle_timeout_s
        self._clock = clock
        self._live: OrderedDict[str, float] = OrderedDict()  # episode id -> last used, least recent first
        self._in_flight = 0
        self._guard = threading.Lock()

    @property
    def live(self) -> int:
        """Live episodes on this worker."""
        return len(self._live)

    def admit_start(self) -> None:
        """Refuse a new episode if this worker holds its maximum of live ones.

        Raises:
            OverCapacityError: At capacity; the client retries after `retry_after_s`.
        """
        if self.max_live_episodes and len(self._live) >= self.max_live_episodes:
            REFUSED.labels("live-episodes").inc()
            raise OverCapacityError(
                f"this server holds its maximum of {self.max_live_episodes} live episodes per worker "
                "(GROUNDSTATE_MAX_LIVE_EPISODES); retry after the Retry-After delay",
                retry_after_s=self.retry_after_s,
            )

    def enter(self) -> None:
        """Count a request in flight, or refuse it past the maximum (then `exit` must not be called).

        Raises:
            OverCapacityError: Too many requests in flight on this worker.
        """
        with self._guard:
            if self.max_in_flight and self._in_flight >= self.max_in_flight:
                REFUSED.labels("in-flight").inc()
                raise OverCapacityError(
                    f"this server works on its maximum of {self.max_in_flight} requests at once per worker "
                    "(GROUNDSTATE_MAX_IN_FLIGHT); retry after the Retry-After delay",
                    retry_after_s=self.retry_after_s,
                )
            self._in_flight += 1

    def exit(self) -> None:
        """A request counted by `enter` is done."""
        with self._guard:
            self._in_flight -= 1

    def touch(self, episode_id: str) -> None:
        """The episode was just used (started, or a call reached it): live, and not idle."""
        with self._guard:
            self._live[episode_id] = self._clock()
            self._live.move_to_end(episode_id)
            LIVE_EPISODES.set(len(self._live))

    def end(self, episode_id: str) -> None:
        """The episode is no longer live here (scored, disposed, reclaimed, or found so in the store)."""
        with self._guard:
            if self._live.pop(episode_id, None) is not None:
                LIVE_EPISODES.set(len(self._live))

    def idle(self) -> list[str]:
        """Live episodes unused for `idle_timeout_s`, least recently used first (none if it is 0)."""
        if not self.idle_timeout_s:
            return []
        now, found = self._clock(), []
        with self._guard:
            for episode_id, used in self._live.items():
                if now - used < self.idle_timeout_s:
                    break
                found.append(episode_id)
        return found

    def reclaimed(self, episode_id: str) -> None:
        """Count one reclaimed episode and stop tracking it."""
        RECLAIMED.inc()
        self.end(episode_id)


def retry_after_header(seconds: float) -> str:
    """`Retry-After` in whole seconds (HTTP allows no fraction), at least 1."""
    return str(max(1, math.ceil(seconds)))
