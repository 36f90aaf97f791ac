"""SQLite sandboxes: each episode is a private in-memory database deserialised from its template's bytes.

A domain's seed is built once per process into a base image; a task's template is that image with the
task's patch applied; an episode's sandbox is a copy of the template image (a memcpy of a few hundred
kilobytes), so sandbox creation does not depend on seed logic or on how many episodes are live. Sandboxes
live in this process; another process (a restarted server, another worker) rebuilds one by replaying the
episode's event log.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.pool import NullPool

from env_server.domain import Domain
from env_server.sandbox import changelog
from env_server.sandbox.base import Sandbox, SandboxEngine, transaction
from env_server.sandbox.snapshot import Snapshot
from env_server.sandbox.template import Template, apply_patch, create_tables, seed

#: The largest string or blob the agent's SQL may build or read (`SQLITE_LIMIT_LENGTH` while it runs).
MAX_VALUE_BYTES = 1_000_000
#: What the agent's SQL may do besides reading a domain table's column.
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE})
#: Functions that reach outside the episode's database or the statement (none is in a default build but one).
_REFUSED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})


def _readonly_authorizer(
    tables: frozenset[str], action: int, arg1: str | None, arg2: str | None, db: str | None, _: str | None
) -> int:
    """SQLite's authorizer for the agent's SQL: read the domain's tables in `main`, call plain functions.

    The engine asks it for every table, column and function a statement touches as it is prepared, so a
    statement the parser misjudged still cannot ATTACH another file, run a PRAGMA, write, or read the
    sandbox's own bookkeeping.
    """
    if action == sqlite3.SQLITE_READ:
        return sqlite3.SQLITE_OK if db == "main" and arg1 in tables else sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _REFUSED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_OK if action in _ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


#: The in-memory database the next checkout of `_ENGINE` should hand out (set around each checkout).
_current: ContextVar[sqlite3.Connection] = ContextVar("groundstate_sqlite_sandbox")


class _Borrowed:
    """A sandbox's DBAPI connection lent to SQLAlchemy: `close()` returns it instead of closing it."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        object.__setattr__(self, "_raw", raw)

    def close(self) -> None:
        """Keep the in-memory database: it belongs to the sandbox, not to the pool."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._raw, name, value)


#: One engine for every SQLite sandbox of the process, so compiled statements are cached once and reused by
#: all episodes (an engine per sandbox would recompile every statement of every episode).
_ENGINE: Engine = create_engine("sqlite://", creator=lambda: _Borrowed(_current.get()), poolclass=NullPool)


@dataclass(frozen=True)
class _Image:
    """A serialised database and the snapshot of its compared rows."""

    data: bytes
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
        raw.execute("PRAGMA foreign_keys = ON")
        self._raw = raw
        self._on_dispose = on_dispose

    @classmethod
    def from_image(cls, sandbox_id: str, template: Template, data: bytes, **kwargs: object) -> SQLiteSandbox:
        """A new in-memory database holding a copy of `data`."""
        raw = sqlite3.connect(":memory:", check_same_thread=False)
        raw.deserialize(data)
        return cls(sandbox_id, template, raw, **kwargs)  # type: ignore[arg-type]

    @contextmanager
    def connection(self, *, commit: bool = True) -> Iterator[Connection]:
        """See `Sandbox.connection`."""
        token = _current.set(self._raw)
        try:
            conn = _ENGINE.connect()
        finally:
            _current.reset(token)
        with conn, transaction(conn, commit=commit):
            yield conn

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: the engine's authorizer, `query_only`, a deadline, a size cap.

        The authorizer (`_readonly_authorizer`) lets the statement read the domain's tables and call
        functions, and refuses everything else (ATTACH, PRAGMA, writes, the sandbox's own tables);
        `SQLITE_LIMIT_LENGTH` keeps any string or blob the statement builds under `MAX_VALUE_BYTES` (a
        `zeroblob` or `printf` of a gigabyte fails at once instead of filling memory); the progress
        handler ends a statement past its deadline.
        """
        deadline = time.monotonic() + timeout_ms / 1000
        tables = frozenset(self.template.domain.metadata.tables)
        self._raw.execute("PRAGMA query_only = 1")
        self._raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        length = self._raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        try:
            with self.connection(commit=False) as conn:
                self._raw.set_authorizer(partial(_readonly_authorizer, tables))
                try:
                    yield conn
                finally:
                    self._raw.set_authorizer(None)
        finally:
            self._raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
            self._raw.set_progress_handler(None, 0)
            self._raw.execute("PRAGMA query_only = 0")

    def image(self) -> bytes:
        """The database serialised."""
        return self._raw.serialize()

    def dispose(self) -> None:
        """Close the in-memory database; its memory is freed."""
        self._raw.close()
        if self._on_dispose is not None:
            self._on_dispose(self.sandbox_id)


class SQLiteSandboxEngine(SandboxEngine):
    """Base images per domain, template images per task (LRU), live sandboxes indexed by id."""

    backend = "sqlite"

    def __init__(self, max_templates: int = 512) -> None:
        self._bases: dict[str, _Image] = {}
        self._templates: OrderedDict[str, _Image] = OrderedDict()
        self._max_templates = max_templates
        self._live: dict[str, SQLiteSandbox] = {}
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()

    def _base(self, domain: Domain) -> _Image:
        """The seeded database of a domain, with change-log triggers, built once per process."""
        key = domain.fingerprint
        if key not in self._bases:
            raw = sqlite3.connect(":memory:", check_same_thread=False)
            sandbox = SQLiteSandbox("base", Template(domain), raw)
            try:
                with sandbox.connection() as conn:
                    create_tables(conn, domain)
                    seed(conn, domain)
                    for statement in changelog.sqlite_triggers(domain):
                        conn.exec_driver_sql(statement)
                self._bases[key] = _Image(data=sandbox.image(), snapshot=sandbox.snapshot())
            finally:
                sandbox.dispose()
        return self._bases[key]

    def _template(self, template: Template) -> _Image:
        key = template.key
        with self._lock:
            if key in self._templates:
                self._templates.move_to_end(key)
                return self._templates[key]
        with self._build_lock:
            with self._lock:  # another thread may have built it while this one waited
                if key in self._templates:
                    return self._templates[key]
            base = self._base(template.domain)
            built = base if not template.patch else self._patched(base, template)
            with self._lock:
                self._templates[key] = built
                while len(self._templates) > self._max_templates:
                    self._templates.popitem(last=False)
            return built

    @staticmethod
    def _patched(base: _Image, template: Template) -> _Image:
        """The base image with the task's patch; the patched rows are laid over the base snapshot."""
        sandbox = SQLiteSandbox.from_image("template", template, base.data)
        try:
            with sandbox.connection() as conn:
                apply_patch(conn, template.domain, template.patch)
            snapshot = base.snapshot.overlay(sandbox.changed_rows())
            with sandbox.connection() as conn:
                changelog.clear(conn)
            return _Image(data=sandbox.image(), snapshot=snapshot)
        finally:
            sandbox.dispose()

    def is_warm(self, template: Template) -> bool:
        """See `SandboxEngine.is_warm`: the template's image is cached."""
        return template.key in self._templates

    def create(self, sandbox_id: str, template: Template) -> SQLiteSandbox:
        """See `SandboxEngine.create`."""
        data = self._template(template).data
        sandbox = SQLiteSandbox.from_image(sandbox_id, template, data, on_dispose=self._forget)
        with self._lock:
            self._live[sandbox_id] = sandbox
        return sandbox

    def attach(self, sandbox_id: str, template: Template, any_version: bool = False) -> SQLiteSandbox | None:
        """See `SandboxEngine.attach` (a process serves one version of each domain: nothing to check)."""
        with self._lock:
            return self._live.get(sandbox_id)

    def _forget(self, sandbox_id: str) -> None:
        with self._lock:
            self._live.pop(sandbox_id, None)

    def initial_snapshot(self, template: Template) -> Snapshot:
        """See `SandboxEngine.initial_snapshot`."""
        return self._template(template).snapshot

    @property
    def live_count(self) -> int:
        """Sandboxes currently held by this process."""
        return len(self._live)
