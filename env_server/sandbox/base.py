"""The sandbox interface: an isolated database per episode, on any backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection, select, text
from sqlalchemy.orm import Session

from env_server.domain._context import IdCounter
from env_server.sandbox.template import Template
from env_server.scoring.snapshot import Snapshot, read_snapshot


class Sandbox(ABC):
    """One episode's database: a private copy of a template."""

    def __init__(self, sandbox_id: str, template: Template) -> None:
        self.sandbox_id = sandbox_id
        self.template = template

    @abstractmethod
    def connection(self, *, commit: bool = True) -> AbstractContextManager[Connection]:
        """A connection inside one transaction, committed on success (if `commit`), else rolled back."""

    @contextmanager
    def session(self) -> Iterator[Session]:
        """An ORM session inside one transaction (see `connection`)."""
        with self.connection() as conn, Session(bind=conn, autoflush=True) as session:
            yield session
            session.flush()

    def snapshot(self) -> Snapshot:
        """Every domain row, normalised, plus which IDs were generated (for content matching)."""
        with self.connection() as conn:
            return read_snapshot(conn, self.template.domain, _generated_prefixes(conn))

    def query(self, sql: str, limit: int) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one statement in a transaction that is always rolled back."""
        with self.connection(commit=False) as conn:
            result = conn.execute(text(sql))
            return list(result.keys()), [tuple(r) for r in result.fetchmany(limit)]

    @abstractmethod
    def dispose(self) -> None:
        """Drop the copy; nothing of it remains."""


def _generated_prefixes(conn: Connection) -> dict[str, int]:
    return {
        row.prefix: row.next_value for row in conn.execute(select(IdCounter.prefix, IdCounter.next_value))
    }


class SandboxEngine(ABC):
    """Creates, finds and drops sandboxes on one backend."""

    backend: str

    @abstractmethod
    def create(self, sandbox_id: str, template: Template) -> Sandbox:
        """A fresh copy of `template` named `sandbox_id`."""

    @abstractmethod
    def attach(self, sandbox_id: str, template: Template) -> Sandbox | None:
        """The existing sandbox `sandbox_id` if this process can reach it, else None (then replay)."""

    @abstractmethod
    def initial_snapshot(self, template: Template) -> Snapshot:
        """The template's own state, cached: the baseline every diff is taken against."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release pooled resources."""
