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


class StoppableServer:
    """A live starter server a test can stop at any moment (from any thread), e.g. mid-episode."""

    def __init__(self, tmp_path: Path) -> None:
        self._block = starter_server(tmp_path)
        self.url = ""
        self._open = False

    def __enter__(self) -> StoppableServer:
        self.url = self._block.__enter__()
        self._open = True
        return self

    def stop(self) -> None:
        """Shut the server down (idempotent); requests to it then fail to connect."""
        if self._open:
            self._open = False
            self._block.__exit__(None, None, None)

    def __exit__(self, *exc: object) -> None:
        self.stop()
