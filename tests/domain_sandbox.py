"""Seeded in-memory copies of a domain's database for tool tests: seeded once per domain, copied per test."""

from __future__ import annotations

import functools
import random
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, select
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from env_server.domain import Domain, ToolContext, ToolError
from env_server.domain._context import internal_metadata
from shared.tasks import GoldAction


def build_database(domain: Domain, rng_seed: int | None = None) -> sqlite3.Connection:
    """A new in-memory database with the domain's tables, seeded with `rng_seed` (default: the domain's)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    engine = engine_over(conn)
    domain.metadata.create_all(engine)
    internal_metadata.create_all(engine)
    with Session(engine) as session:
        domain.seed(session, random.Random(domain.seed_value if rng_seed is None else rng_seed))
        session.commit()
    return conn


#: The seeded database per (domain, seed), built once per test run; never written to, only copied.
seeded_database = functools.cache(build_database)


def engine_over(conn: sqlite3.Connection) -> Engine:
    """An engine whose only connection is `conn`."""
    return create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)


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
    """Run a tool as the server does: validated arguments; its writes commit, or roll back on a refusal."""
    tool = domain.tools_by_name[name]
    try:
        result = tool.invoke(ToolContext(session=session, now=domain.now), tool.validate(args))
    except ToolError:
        session.rollback()
        raise
    session.commit()
    return result


def tool_caller(domain: Domain) -> Callable[..., Any]:
    """A test module's `call(session, name, **args)`: `run_tool` on `domain`."""

    def call(session: Session, name: str, **args: Any) -> Any:
        """Run a tool as the server does: its writes commit, or roll back when it refuses."""
        return run_tool(session, domain, name, **args)

    return call


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
            run_tool(session, domain, action.tool, **action.args)
        except ToolError as exc:
            refusals.append(f"{action.tool}: {exc}")
    return refusals
