"""One PostgreSQL sandbox: a slot schema, every statement's schema translated in, run as the slot's role.

Tools run as the slot's `_rw` role, the agent's SQL as its `_ro` role (`env_server.sandbox.postgres.roles`):
`SET LOCAL ROLE` rides in the round trip that opens the transaction, so least privilege costs no extra one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import Connection, Engine

from env_server.domain import ToolError
from env_server.errors import BackendError
from env_server.sandbox.base import Sandbox, refusal, transaction
from env_server.sandbox.template import Template

#: Sort and hash memory of the agent's SQL before it spills to temporary files.
WORK_MEM = "4MB"


class PostgresSandbox(Sandbox):
    """A schema; every statement runs with the schema translated in."""

    dialect = "postgres"

    def __init__(
        self,
        sandbox_id: str,
        template: Template,
        engine: Engine,
        schema: str,
        roles: tuple[str, str] | None = None,
        on_dispose: Callable[[PostgresSandbox], None] | None = None,
    ) -> None:
        super().__init__(sandbox_id, template)
        self.schema = schema
        #: The slot's (read-write, read-only) roles; None for the server's own reads of base and template
        #: schemas, which no episode reaches.
        self.roles = roles
        self._timeout_ms = 0
        self._engine = engine
        self._on_dispose = on_dispose

    @contextmanager
    def connection(self, *, commit: bool = True) -> Iterator[Connection]:
        """See `Sandbox.connection`."""
        setup = []
        if commit:  # serialise writers of one episode, whichever worker serves them
            setup.append(f"SELECT pg_advisory_xact_lock(hashtext('{self.schema}'))")
        if self.roles is not None:
            setup.append(f'SET LOCAL ROLE "{self.roles[0]}"')
        with self._engine.connect() as conn:
            conn.execution_options(schema_translate_map={None: self.schema})
            with transaction(conn, commit=commit):
                if setup:  # one round trip (the schema and role names are generated identifiers)
                    conn.exec_driver_sql(";\n".join(setup))
                yield conn

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: a READ ONLY transaction as the slot's read-only role.

        The role may read this slot's domain tables and nothing else of the database; the statement is
        bounded in time (`statement_timeout`) and in sort and hash memory (`work_mem`; temporary files are
        bounded by the server role's `temp_file_limit`, which only a superuser can set: docs/operations).
        """
        self._timeout_ms = timeout_ms
        role = self.roles[1] if self.roles is not None else None
        setup = [
            "SET TRANSACTION READ ONLY",
            *([f'SET LOCAL ROLE "{role}"'] if role else []),
            f'SET LOCAL search_path TO "{self.schema}"',
            f"SET LOCAL statement_timeout = {int(timeout_ms)}",
            f"SET LOCAL work_mem = '{WORK_MEM}'",
        ]
        with self._engine.connect() as conn, transaction(conn, commit=False):
            conn.exec_driver_sql(";\n".join(setup))
            yield conn

    def run_agent_sql(self, conn: Connection, sql: str, limit: int) -> tuple[list[str], list[Any]]:
        """See `Sandbox.run_agent_sql`: as a cursor the engine declares, so the text must be one query.

        `DECLARE ... CURSOR FOR` takes a SELECT or VALUES and nothing else (no `SET ROLE`, no `RESET
        ROLE`, no `SET SESSION AUTHORIZATION`), and, prepared, no second command can follow it; with no
        parameters the driver reads no placeholder (`LIKE '%example%'` means what it says).
        """
        raw = conn.connection.driver_connection
        cursor = raw.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(f"DECLARE gs_agent_sql NO SCROLL CURSOR FOR {sql}", prepare=True)
            cursor.execute(f"FETCH FORWARD {int(limit)} FROM gs_agent_sql")
            return [c.name for c in cursor.description or ()], cursor.fetchall()
        except psycopg.errors.QueryCanceled:
            raise ToolError(
                f"the query ran past its time limit ({self._timeout_ms:,} ms): narrow it or aggregate"
            ) from None
        except psycopg.Error as exc:
            if raw is None or raw.broken:  # the connection, not the statement: infrastructure
                raise BackendError(f"the sandbox database connection failed: {exc}") from exc
            raise ToolError(refusal(exc)) from None

    def dispose(self) -> None:
        """Give the slot back to the pool; nothing of this episode is visible to the next holder."""
        if self._on_dispose is not None:
            self._on_dispose(self)

    def evict(self) -> None:
        """Keep the slot: another worker may be serving this episode from it (see `Sandbox.evict`)."""
