"""Seeded in-memory copies of a domain's database for tool tests: seeded once per domain, copied per test.

Tools run through the server's own execution code (`env_server.execution.run_tool`) on an SQLite sandbox
over the test's copy: the same length checks, database-error mapping, read-only rollback and ID counters as
an episode. The test's own session shares the copy, to set up rows before a call and inspect them after.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, select
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from env_server.domain import Domain, ToolError
from env_server.execution import run_tool as run_call
from env_server.sandbox import Template
from env_server.sandbox.sqlite import SQLiteSandbox
from env_server.sandbox.template import create_tables, seed
from shared.tasks import GoldAction

#: The in-memory database behind each engine `engine_over` made, so a tool call can run on it.
_DATABASES: weakref.WeakKeyDictionary[Engine, sqlite3.Connection] = weakref.WeakKeyDictionary()


def build_database(domain: Domain, rng_seed: int | None = None) -> sqlite3.Connection:
    """A new in-memory database with the domain's tables, seeded with `rng_seed` (default: the domain's)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    engine = engine_over(conn)
    if rng_seed is not None:
        domain = dataclasses.replace(domain, seed_value=rng_seed)
    with engine.begin() as connection:  # as the server builds a sandbox's base: tables, then the seed
        create_tables(connection, domain)
        seed(connection, domain)
    return conn


#: The seeded database per (domain, seed), built once per test run; never written to, only copied.
seeded_database = functools.cache(build_database)


def engine_over(conn: sqlite3.Connection) -> Engine:
    """An engine whose only connection is `conn` (tool calls on a session over it run on `conn` too)."""
    engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
    _DATABASES[engine] = conn
    return engine


def fresh_engine(domain: Domain, rng_seed: int | None = None) -> Engine:
    """An engine over a private copy of the seeded database, with foreign keys enforced."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    seeded_database(domain, rng_seed).backup(conn)
    conn.execute("PRAGMA foreign_keys = ON")
    return engine_over(conn)


@contextmanager
def seeded_session(domain: Domain) -> Iterator[Session]:
    """A session on a private copy of the seeded database (the tool tests' sandbox)."""
    engine = fresh_engine(domain)
    try:
        with Session(engine) as session:
            yield session
    finally:
        engine.dispose()


def run_tool(session: Session, domain: Domain, name: str, **args: Any) -> Any:
    """Run a tool as the server does, on the database under `session`; its refusal is raised as `ToolError`.

    The test's pending rows are committed first (the call runs in its own transaction), and every row the
    session holds is read again afterwards.
    """
    return _run(session, domain, domain.tools_by_name, name, args)


def run_user_tool(session: Session, domain: Domain, name: str, **args: Any) -> Any:
    """`run_tool` for one of the domain's user tools (the customer's own, in a dual-control domain)."""
    return _run(session, domain, domain.user_tools_by_name, name, args)


def _run(session: Session, domain: Domain, tools: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    session.commit()
    bind = session.get_bind()
    if not isinstance(bind, Engine) or bind not in _DATABASES:
        raise TypeError("run tools on a session over an engine from `engine_over` or `fresh_engine`")
    sandbox = SQLiteSandbox("tool-test", Template(domain), _DATABASES[bind])
    result = run_call(sandbox, tools, name, args)
    session.expire_all()
    if result.error is not None:
        raise ToolError(result.error)
    return result.output


def tool_caller(domain: Domain) -> Callable[..., Any]:
    """A test module's `call(session, name, **args)`: `run_tool` on `domain`."""

    def call(session: Session, name: str, **args: Any) -> Any:
        """Run a tool as the server does: its writes commit, or roll back when it refuses."""
        return run_tool(session, domain, name, **args)

    return call


def user_tool_caller(domain: Domain) -> Callable[..., Any]:
    """A test module's `act(session, name, **args)`: `run_user_tool` on `domain` (the customer acts)."""

    def act(session: Session, name: str, **args: Any) -> Any:
        """Run a user tool as the server does for the customer: writes commit, a refusal rolls back."""
        return run_user_tool(session, domain, name, **args)

    return act


def sandbox_fixture(domain: Domain, name: str = "sandbox") -> Any:
    """A test module's fixture `name`: a session on a fresh copy of `domain`'s seeded database per test."""

    @pytest.fixture(name=name)
    def sandbox() -> Iterator[Session]:
        with seeded_session(domain) as session:
            yield session

    return sandbox


def count_rows(session: Session, model: type, **where: Any) -> int:
    """Rows of `model` whose columns equal `where` (all rows without it)."""
    return session.scalar(select(func.count()).select_from(model).filter_by(**where)) or 0


def replay_actions(session: Session, domain: Domain, actions: Iterable[GoldAction]) -> list[str]:
    """Run `actions` one by one like `run_tool`; return the refusals as "tool: message" (the rest commit)."""
    refusals = []
    for action in actions:
        try:
            run_tool(session, domain, action.name, **action.arguments)
        except ToolError as exc:
            refusals.append(f"{action.name}: {exc}")
    return refusals
