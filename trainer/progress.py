"""Progress of a batch job whose output is not a terminal: a plain line every so often, for a log file.

Rich draws `eval`'s progress bar only on a terminal; redirected to a file (`eval ... > log`), a campaign used
to print nothing until it ended. `PlainProgress` writes one self-contained line at most every `every_s`
seconds, and at the end:

    replay: 120/480 trials · 4 running · 2 errors · pass@1 52.5% · 0.82 trials/s · ETA 7m19s
"""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["PlainProgress", "duration"]


def duration(seconds: float) -> str:
    """`1h02m`, `7m19s` or `42s`: short enough for a log line."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class PlainProgress:
    """Periodic progress lines: done of planned, running, errors, the pass rate so far, the rate and ETA."""

    def __init__(
        self, label: str, planned: int, *, done: int = 0, every_s: float = 30.0, stream: IO[str] | None = None
    ) -> None:
        """Start counting; `done` trials were finished before (resumed), so they count in neither rate."""
        self.label, self.planned, self.every_s = label, planned, every_s
        self.stream = stream or sys.stderr
        self.done = self.resumed = done
        self.running, self.errors, self.rate = 0, 0, ""
        self.started = self.last = time.monotonic()

    def update(self, *, advance: int = 0, running: int, errors: int, rate: str) -> None:
        """Record the counters; write a line when `every_s` has passed since the last one."""
        self.done += advance
        self.running, self.errors, self.rate = running, errors, rate
        if time.monotonic() - self.last >= self.every_s:
            self.write()

    def line(self) -> str:
        """The current line."""
        elapsed = time.monotonic() - self.started
        fresh = self.done - self.resumed
        speed = fresh / elapsed if elapsed > 0 else 0.0
        left = self.planned - self.done
        eta = duration(left / speed) if speed > 0 else "—"
        errors = f" · {self.errors} errors" if self.errors else ""
        return (
            f"{self.label}: {self.done}/{self.planned} trials · {self.running} running{errors} · "
            f"{self.rate} · {speed:.2f} trials/s · ETA {eta if left else '0s'}"
        )

    def write(self) -> None:
        """Write the current line now."""
        self.last = time.monotonic()
        print(self.line(), file=self.stream, flush=True)
