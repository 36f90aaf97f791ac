"""Hotel test fixtures: fresh copies of one seeded in-memory sandbox, built once per test run."""

from __future__ import annotations

import functools
import random
import sqlite3
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from env_server.domain._context import internal_metadata
from env_server.domains.hotel import domain


@functools.cache
def _template() -> sqlite3.Connection:
    """The seeded schema; never written to, only copied."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
    domain.metadata.create_all(engine)
    internal_metadata.create_all(engine)
    with Session(engine) as session:
        domain.seed(session, random.Random(domain.seed_value))
        session.commit()
    return conn


@pytest.fixture
def fresh_engine() -> Iterator[Callable[[], Engine]]:
    """A factory of engines, each over its own copy of the seeded sandbox (foreign keys enforced)."""
    opened: list[tuple[Engine, sqlite3.Connection]] = []

    def make() -> Engine:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        _template().backup(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        engine = create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)
        opened.append((engine, conn))
        return engine

    yield make
    for engine, conn in opened:
        engine.dispose()
        conn.close()


@pytest.fixture
def sandbox(fresh_engine: Callable[[], Engine]) -> Iterator[Session]:
    """A session on a private copy of the seeded sandbox."""
    with Session(fresh_engine()) as session:
        yield session
