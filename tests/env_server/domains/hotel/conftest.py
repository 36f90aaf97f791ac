"""Hotel test fixtures: fresh copies of one seeded in-memory sandbox, built once per test run."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from env_server.domains.hotel import domain
from tests.domain_sandbox import fresh_engine as engine_copy


@pytest.fixture
def fresh_engine() -> Iterator[Callable[[], Engine]]:
    """A factory of engines, each over its own copy of the seeded sandbox (foreign keys enforced)."""
    opened: list[Engine] = []

    def make() -> Engine:
        opened.append(engine_copy(domain))
        return opened[-1]

    yield make
    for engine in opened:
        engine.dispose()


@pytest.fixture
def sandbox(fresh_engine: Callable[[], Engine]) -> Iterator[Session]:
    """A session on a private copy of the seeded sandbox."""
    with Session(fresh_engine()) as session:
        yield session
