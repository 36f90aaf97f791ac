"""The sandbox interface: an isolated database per episode, on any backend."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from env_server.domain import ToolError
from env_server.sandbox.bookkeeping import id_counters
from env_server.sandbox.limits import SandboxSession
from env_server.sandbox.snapshot import ChangedRows, Snapshot, normalise, read_changed, read_snapshot
from env_server.sandbox.template import Template


@contextmanager
def transaction(conn: Connection, *, commit: bool) -> Iterator[Connection]:
    """One transaction on `conn`: committed on success when `commit`, else (and on any error) rolled back."""
    trans = conn.begin()
    try:
        yield conn
    except BaseException:
        if trans.is_active:  # a failed ORM flush may have rolled it back already
            trans.rollback()
        raise
    if commit:
        trans.commit()
    else:
        trans.rollback()


class Sandbox(ABC):
    """One episode's database: a private copy of a template."""

    #: sqlglot dialect of the backend, for parsing the agent's SQL.
    dialect: str

    def __init__(self, sandbox_id: str, template: Template) -> None:
        self.sandbox_id = sandbox_id
        self.template = template
        #: The last event of the episode this copy reflects (an in-process copy falls behind when another
        #: worker serves a request of the episode; it then catches up from the event log).
        self.applied_seq = 0

    @abstractmethod
    def connection(self, *, commit: bool = True) -> AbstractContextManager[Connection]:
        """A connection inside one transaction, committed on success (if `commit`), else rolled back."""

    @contextmanager
    def session(self, *, commit: bool = True) -> Iterator[Session]:
        """An ORM session inside one transaction (see `connection`).

        With `commit=False` (read tools) nothing may change: the transaction is rolled back, and a session
        holding changes at the end is a bug of the tool, raised rather than silently dropped.
        """
        with self.connection(commit=commit) as conn, SandboxSession(bind=conn, autoflush=True) as session:
            yield session
            if not commit and (session.new or session.dirty or session.deleted):
                raise RuntimeError("a read-only tool changed rows; declare it with kind='write'")
            session.flush()

    def snapshot(self) -> Snapshot:
        """Every compared domain row, normalised (used once per domain, for the seed's baseline)."""
        with self.connection(commit=False) as conn:
            return read_snapshot(conn, self.template.domain, id_counters(conn))

    def changed_rows(self) -> ChangedRows:
        """The rows this sandbox's change log names, as they are now (the input of scoring)."""
        with self.connection(commit=False) as conn:
            return read_changed(conn, self.template.domain, id_counters(conn))

    @abstractmethod
    def readonly_connection(self, timeout_ms: int) -> AbstractContextManager[Connection]:
        """A connection the database itself keeps from writing, with a statement time limit."""

    def readonly_select(
        self, sql: str, limit: int, timeout_ms: int = 2000
    ) -> tuple[list[str], list[list[Any]], bool]:
        """Run a SELECT in a read-only transaction; the database's errors are the agent's.

        This is the second lock on the agent's SQL: the parser check (`env_server.execution.sql_guard`)
        runs first, in `env_server.execution.readonly_query`.

        Returns the column names, at most `limit` rows of JSON-ready values, and whether rows were cut off.
        """
        try:
            with self.readonly_connection(timeout_ms) as conn:
                columns, rows = self.run_agent_sql(conn, sql, limit + 1)
        except DBAPIError as exc:
            raise ToolError(refusal(exc.orig or exc)) from None
        cells = [[normalise(v, _never_generated) for v in row] for row in rows[:limit]]
        check_size(cells)
        return columns, cells, len(rows) > limit

    def run_agent_sql(self, conn: Connection, sql: str, limit: int) -> tuple[list[str], list[Any]]:
        """Execute the agent's statement as it is; its column names and at most `limit` rows."""
        result = conn.exec_driver_sql(sql)
        return list(result.keys()), list(result.fetchmany(limit))

    @abstractmethod
    def dispose(self) -> None:
        """Drop the copy; nothing of it remains."""

    def evict(self) -> None:
        """Let go of this process's hold on a live episode's sandbox (the episode goes on).

        An in-process copy is dropped (the next request rebuilds it by replaying the episode's calls); a
        backend whose sandboxes live in a shared database keeps it there for any worker to attach to.
        """
        self.dispose()


def _never_generated(_: str) -> None:
    return None


def refusal(error: BaseException) -> str:
    """What the agent reads when the database refuses its SQL: the first line of the database's reason."""
    lines = str(error).strip().splitlines()
    return f"the database refused the query: {lines[0] if lines else type(error).__name__}"


#: The largest cell of a query's result, and the largest result, in characters of JSON text.
MAX_CELL_BYTES = 16_000
MAX_RESULT_BYTES = 256_000


def check_size(rows: list[list[Any]]) -> None:
    """Refuse a result whose cells or whole is over the caps: the agent aggregates or cuts instead.

    Rows are capped by count elsewhere; this keeps a 30-character query from returning megabytes.
    """
    total = 0
    for row in rows:
        for cell in row:
            size = len(cell) if isinstance(cell, str) else len(json.dumps(cell, default=str))
            if size > MAX_CELL_BYTES:
                raise ToolError(
                    f"a cell of the result holds {size:,} characters; at most {MAX_CELL_BYTES:,} per cell "
                    "come back (select a part of it, e.g. substr(...), or aggregate)"
                )
            total += size
    if total > MAX_RESULT_BYTES:
        raise ToolError(
            f"the result holds {total:,} characters; at most {MAX_RESULT_BYTES:,} come back "
            "(select fewer columns or rows, or aggregate)"
        )


class SandboxEngine(ABC):
    """Creates, finds and drops sandboxes on one backend."""

    backend: str
    #: Whether every process reaches the same sandbox (PostgreSQL slots); else each holds its own copy.
    shared: bool = False

    @abstractmethod
    def create(self, sandbox_id: str, template: Template) -> Sandbox:
        """A fresh copy of `template` named `sandbox_id`."""

    @abstractmethod
    def attach(self, sandbox_id: str, template: Template, any_version: bool = False) -> Sandbox | None:
        """The existing sandbox `sandbox_id` if this process can reach it, else None (then replay).

        A sandbox built for another version of the domain raises `DomainVersionError`, unless `any_version`
        (to dispose of it).
        """

    def is_warm(self, template: Template) -> bool:
        """Whether a sandbox of `template` can be made without building anything first (a seed, a patch)."""
        return False

    @abstractmethod
    def initial_snapshot(self, template: Template) -> Snapshot:
        """The template's own state, cached: the baseline every diff is taken against."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release pooled resources."""
