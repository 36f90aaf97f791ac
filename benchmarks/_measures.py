"""What the load benchmarks measure besides the client's timings: quantiles, and a server's CPU and memory.

The server's figures are read from the operating system (psutil) for the server process and its workers,
and on PostgreSQL for the database backends serving its databases, so they cost the server nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable
from typing import Any

import psutil
from sqlalchemy import create_engine, text


def quantiles(values: list[float]) -> dict[str, float | int | None]:
    """p50/p95/p99 in milliseconds (nearest rank), and the count."""
    if not values:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None}
    ordered = sorted(values)

    def rank(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 2)

    return {"n": len(ordered), "p50_ms": rank(0.50), "p95_ms": rank(0.95), "p99_ms": rank(0.99)}


def by_live(pairs: list[tuple[int, float]], buckets: int = 8) -> list[dict[str, Any]]:
    """Tool-call p99 by the number of live episodes when the call was made, in `buckets` equal bands."""
    if not pairs:
        return []
    top = max(live for live, _ in pairs)
    width = max(1, math.ceil(top / buckets))
    bands: dict[int, list[float]] = {}
    for live, latency in pairs:
        bands.setdefault(live // width, []).append(latency)
    return [
        {"live_from": b * width, "live_to": (b + 1) * width - 1, **quantiles(v)}
        for b, v in sorted(bands.items())
    ]


class ServerStats:
    """CPU seconds and resident memory of a server process and its workers, sampled while a burst runs.

    On PostgreSQL also the CPU seconds of the database's backends serving the server's two databases
    (`pg_stat_activity`; the server's pools keep their connections, so their backends live through the
    burst), for the capacity model's database share.
    """

    def __init__(self, pid: int, databases: list[str] | None = None) -> None:
        self.root = psutil.Process(pid)
        self.databases = databases or []
        self.cpu0 = self.cpu()
        self.rss0 = self.rss()
        self.samples: list[tuple[int, int]] = []  # (live episodes, rss bytes)
        self.pg_backends: dict[int, tuple[psutil.Process, float]] = {}  # pid -> (process, cpu at first sight)
        self.see_pg_backends()

    def see_pg_backends(self) -> None:
        """Note the database backends serving the server now (their CPU counts from when first seen)."""
        for url in self.databases[:1]:
            names = [u.rsplit("/", 1)[1] for u in self.databases]
            engine = create_engine(url)
            with engine.connect() as conn:
                pids = conn.execute(
                    text(
                        "SELECT pid FROM pg_stat_activity"
                        " WHERE datname = ANY(:names) AND pid <> pg_backend_pid()"
                    ),
                    {"names": names},
                ).scalars()
                for pid in pids:
                    if pid not in self.pg_backends:
                        with contextlib.suppress(psutil.Error):
                            proc = psutil.Process(pid)
                            t = proc.cpu_times()
                            self.pg_backends[pid] = (proc, t.user + t.system)
            engine.dispose()

    def pg_cpu(self) -> float | None:
        """CPU seconds the database's backends spent since first seen (None on SQLite)."""
        if not self.databases:
            return None
        total = 0.0
        for proc, start in self.pg_backends.values():
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                total += t.user + t.system - start
        return total

    def processes(self) -> list[psutil.Process]:
        return [self.root, *self.root.children(recursive=True)]

    def cpu(self) -> float:
        total = 0.0
        for p in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def rss(self) -> int:
        total = 0
        for p in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                total += p.memory_info().rss
        return total

    async def sample(self, live: Callable[[], int], every_s: float = 0.25) -> None:
        """Record (live episodes, rss) until cancelled, and note new database backends every few samples."""
        while True:
            self.samples.append((live(), self.rss()))
            if self.databases and len(self.samples) % 8 == 0:
                await asyncio.to_thread(self.see_pg_backends)
            await asyncio.sleep(every_s)
