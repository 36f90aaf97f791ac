"""The initial-snapshot cache: every diff of an episode is taken against its template's snapshot.

A domain's base snapshot is read once per process; a task's snapshot is the base with the rows its patch
touched (the template schema's own change log) laid over it, kept in a bounded LRU.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from env_server.domain import Domain
from env_server.sandbox.snapshot import ChangedRows, Snapshot
from env_server.sandbox.template import Template


class SnapshotCache:
    """Base snapshots per domain and, at most `max_snapshots`, template snapshots per task."""

    def __init__(
        self,
        read_base: Callable[[Domain], Snapshot],
        read_patch: Callable[[Template], ChangedRows],
        max_snapshots: int = 256,
    ) -> None:
        """Keep snapshots read through the given functions.

        Args:
            read_base: reads every compared row of a domain's base schema.
            read_patch: reads the rows a template's patch changed, from its template schema.
            max_snapshots: template snapshots kept (least recently used dropped first).
        """
        self._read_base = read_base
        self._read_patch = read_patch
        self._bases: dict[str, Snapshot] = {}
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._max_snapshots = max_snapshots
        self._lock = threading.Lock()

    def get(self, template: Template) -> Snapshot:
        """The template's snapshot: the base snapshot, the template's logged patch over it."""
        key = template.key
        with self._lock:
            if key in self._snapshots:
                self._snapshots.move_to_end(key)
                return self._snapshots[key]
        domain = template.domain
        if domain.fingerprint not in self._bases:
            self._bases[domain.fingerprint] = self._read_base(domain)
        snapshot = self._bases[domain.fingerprint]
        if template.patch:
            snapshot = snapshot.overlay(self._read_patch(template))
        with self._lock:
            self._snapshots[key] = snapshot
            while len(self._snapshots) > self._max_snapshots:
                self._snapshots.popitem(last=False)
        return snapshot
