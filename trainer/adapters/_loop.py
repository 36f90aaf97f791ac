"""One background event loop for the synchronous frameworks (SkyRL-Gym's `init`/`step` are plain calls).

The rollout and the client are asyncio code; a synchronous environment submits its coroutines to this loop,
which runs in a daemon thread for the life of the process, so many environments (SkyRL runs one per
trajectory, in a thread pool) share one loop and each keeps its client on it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="groundstate-adapters", daemon=True).start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run `coro` on the shared background loop and wait for its result (or its exception)."""
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result(timeout)
