"""SQLite sandboxes: each episode is a private in-memory database deserialised from its template's bytes.

Building a template (schema + seed + patch) costs milliseconds to seconds; copying one is a memcpy of a few
hundred kilobytes, so sandbox creation does not depend on seed size logic or on how many episodes are live.
Sandboxes live in this process; another process (a restarted server, another worker) rebuilds one from the
episode's event log.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.pool import StaticPool

from env_server.sandbox.base import Sandbox, SandboxEngine
from env_server.sandbox.template import Template, create_tables, populate
from env_server.scoring.snapshot import Snapshot


def _engine_over(raw: sqlite3.Connection) -> Engine:
    """A SQLAlchemy engine whose only connection is `raw` (foreign keys enforced)."""
    raw.execute("PRAGMA foreign_keys = ON")
    return create_engine("sqlite://", creator=lambda: raw, poolclass=StaticPool)


@dataclass(frozen=True)
class _BuiltTemplate:
    image: bytes
    snapshot: Snapshot


class SQLiteSandbox(Sandbox):
    """An in-memory SQLite copy of a template, owned by this process."""

    dialect = "sqlite"

    def __init__(
        self,
        sandbox_id: str,
        template: Template,
        raw: sqlite3.Connection,
        on_dispose: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(sandbox_id, template)
        self._raw = raw
        self._engine = _engine_over(raw)
        self._on_dispose = on_dispose

    @contextmanager
    def connection(self, *, commit: bool = True) -> Iterator[Connection]:
        """See `Sandbox.connection`."""
        with self._engine.connect() as conn:
            trans = conn.begin()
            try:
                yield conn
            except BaseException:
                trans.rollback()
                raise
            if commit:
                trans.commit()
            else:
                trans.rollback()

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: `PRAGMA query_only` plus a progress-handler deadline."""
        deadline = time.monotonic() + timeout_ms / 1000
        self._raw.execute("PRAGMA query_only = 1")
        self._raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            with self.connection(commit=False) as conn:
                yield conn
        finally:
            self._raw.set_progress_handler(None, 0)
            self._raw.execute("PRAGMA query_only = 0")

    def dispose(self) -> None:
        """Close the in-memory database; its memory is freed."""
        self._engine.dispose()
        self._raw.close()
        if self._on_dispose is not None:
            self._on_dispose(self.sandbox_id)


class SQLiteSandboxEngine(SandboxEngine):
    """Template images cached per task (LRU); live sandboxes indexed by id."""

    backend = "sqlite"

    def __init__(self, max_templates: int = 512) -> None:
        self._templates: OrderedDict[str, _BuiltTemplate] = OrderedDict()
        self._max_templates = max_templates
        self._live: dict[str, SQLiteSandbox] = {}
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()

    def _built(self, template: Template) -> _BuiltTemplate:
        key = template.key
        with self._lock:
            if key in self._templates:
                self._templates.move_to_end(key)
                return self._templates[key]
        with self._build_lock:
            with self._lock:
                if key in self._templates:
                    return self._templates[key]
            built = self._build(template)
            with self._lock:
                self._templates[key] = built
                while len(self._templates) > self._max_templates:
                    self._templates.popitem(last=False)
            return built

    @staticmethod
    def _build(template: Template) -> _BuiltTemplate:
        raw = sqlite3.connect(":memory:", check_same_thread=False)
        sandbox = SQLiteSandbox("template", template, raw)
        try:
            with sandbox.connection() as conn:
                create_tables(conn, template.domain)
                populate(conn, template)
            return _BuiltTemplate(image=raw.serialize(), snapshot=sandbox.snapshot())
        finally:
            sandbox.dispose()

    def create(self, sandbox_id: str, template: Template) -> SQLiteSandbox:
        """See `SandboxEngine.create`."""
        built = self._built(template)
        raw = sqlite3.connect(":memory:", check_same_thread=False)
        raw.deserialize(built.image)
        sandbox = SQLiteSandbox(sandbox_id, template, raw, on_dispose=self._forget)
        with self._lock:
            self._live[sandbox_id] = sandbox
        return sandbox

    def attach(self, sandbox_id: str, template: Template) -> SQLiteSandbox | None:
        """See `SandboxEngine.attach`."""
        with self._lock:
            return self._live.get(sandbox_id)

    def _forget(self, sandbox_id: str) -> None:
        with self._lock:
            self._live.pop(sandbox_id, None)

    def initial_snapshot(self, template: Template) -> Snapshot:
        """See `SandboxEngine.initial_snapshot`."""
        return self._built(template).snapshot

    @property
    def live_count(self) -> int:
        """Sandboxes currently held by this process."""
        return len(self._live)
