"""The sandboxes this process holds, bounded: least recently used and idle ones are evicted.

Evicting a sandbox loses nothing: every tool call is in the store, so an episode whose in-process (SQLite)
sandbox was evicted gets it back by replaying its calls on its next request (the same path as a restart).
A PostgreSQL sandbox stays in its slot, where any worker may be serving it; eviction only drops this
process's handle (slots of abandoned episodes are reclaimed by `groundstate sandboxes prune --held-hours`).
Memory therefore stays bounded however many episodes a trainer leaves open.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import Counter, Gauge

from env_server.sandbox.base import Sandbox

#: Summed over live workers when the server runs several (see `/metrics`).
LIVE = Gauge(
    "groundstate_live_sandboxes", "Sandboxes held by this server's workers", multiprocess_mode="livesum"
)
EVICTED = Counter("groundstate_sandboxes_evicted_total", "Sandboxes evicted", ["reason"])


class LiveSandboxes:
    """Episode id → sandbox, in least-recently-used order, with a capacity and an idle limit."""

    def __init__(self, capacity: int, idle_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = capacity
        self.idle_s = idle_s
        self._clock = clock
        self._held: OrderedDict[str, tuple[Sandbox, float]] = OrderedDict()
        self._guard = threading.Lock()

    def __len__(self) -> int:
        return len(self._held)

    def get(self, episode_id: str) -> Sandbox | None:
        """The episode's sandbox, marked as just used; None if not held."""
        with self._guard:
            held = self._held.get(episode_id)
            if held is None:
                return None
            self._held[episode_id] = (held[0], self._clock())
            self._held.move_to_end(episode_id)
            return held[0]

    def peek(self, episode_id: str) -> Sandbox | None:
        """The episode's sandbox if held, without marking it used."""
        held = self._held.get(episode_id)
        return None if held is None else held[0]

    def put(self, episode_id: str, sandbox: Sandbox) -> None:
        """Hold a sandbox (most recently used)."""
        with self._guard:
            self._held[episode_id] = (sandbox, self._clock())
            self._held.move_to_end(episode_id)
            LIVE.set(len(self._held))

    def pop(self, episode_id: str) -> Sandbox | None:
        """Stop holding the episode's sandbox and return it (the caller disposes of it)."""
        with self._guard:
            held = self._held.pop(episode_id, None)
            LIVE.set(len(self._held))
            return None if held is None else held[0]

    def candidates(self) -> list[tuple[str, str]]:
        """Episodes to evict, oldest first, with the reason: over capacity, or idle too long.

        Walks from the least recently used end and stops at the first episode to keep, so a start costs
        O(evicted), not O(held).
        """
        found: list[tuple[str, str]] = []
        with self._guard:
            now = self._clock()
            over = len(self._held) - self.capacity
            for i, (episode_id, (_, used)) in enumerate(self._held.items()):
                if i < over:
                    found.append((episode_id, "capacity"))
                elif now - used > self.idle_s:
                    found.append((episode_id, "idle"))
                else:
                    break
        return found

    def evicted(self, reason: str) -> None:
        """Count one eviction."""
        EVICTED.labels(reason).inc()
