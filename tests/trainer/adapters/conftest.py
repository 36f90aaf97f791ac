"""Fixtures of the adapter tests: a live server with the starter domain, which a test may stop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.starter import domain as starter
from env_server.settings import Settings
from tests.live_server import serve

#: A starter task whose reference conversation earns reward 1 against the scripted user.
TASK = "starter-renew-001"


def starter_server(tmp_path: Path) -> AbstractContextManager[str]:
    """A live server with the starter domain alone (SQLite), running until its block ends."""
    settings = Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url="sqlite://")
    return serve(create_app(settings, registry=DomainRegistry([starter])))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The starter server's URL for the test's duration."""
    with starter_server(tmp_path) as url:
        yield url
