"""One PostgreSQL sandbox: a slot schema, with every statement's schema translated in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text

from env_server.sandbox.base import Sandbox, transaction
from env_server.sandbox.template import Template


class PostgresSandbox(Sandbox):
    """A schema; every statement runs with the schema translated in."""

    dialect = "postgres"

    def __init__(
        self,
        sandbox_id: str,
        template: Template,
        engine: Engine,
        schema: str,
        on_dispose: Callable[[PostgresSandbox], None] | None = None,
    ) -> None:
        super().__init__(sandbox_id, template)
        self.schema = schema
        self._engine = engine
        self._on_dispose = on_dispose

    @contextmanager
    def connection(self, *, commit: bool = True) -> Iterator[Connection]:
        """See `Sandbox.connection`."""
        with self._engine.connect() as conn:
            conn.execution_options(schema_translate_map={None: self.schema})
            with transaction(conn, commit=commit):
                if commit:  # serialise writers of one episode, whichever worker serves them
                    conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:s))"), {"s": self.schema})
                yield conn

    @contextmanager
    def readonly_connection(self, timeout_ms: int) -> Iterator[Connection]:
        """See `Sandbox.readonly_connection`: a READ ONLY transaction seeing only this schema."""
        with self.connection(commit=False) as conn:
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            conn.exec_driver_sql(f'SET LOCAL search_path TO "{self.schema}"')
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
            yield conn

    def dispose(self) -> None:
        """Give the slot back to the pool; nothing of this episode is visible to the next holder."""
        if self._on_dispose is not None:
            self._on_dispose(self)

    def evict(self) -> None:
        """Keep the slot: another worker may be serving this episode from it (see `Sandbox.evict`)."""
