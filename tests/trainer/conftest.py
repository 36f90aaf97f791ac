"""Fixtures the training-loop tests share (TRL's and Verl's alike)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain as telecom
from env_server.settings import Settings
from tests.live_server import serve

#: A dual-control train task: the customer restarts their router when asked.
DUAL_TASK = "telecom-router-104"
#: The telecom customer's own tools, which no model may ever see or call.
USER_TOOLS = frozenset(t.name for t in telecom.user_tools)


@pytest.fixture(scope="module")
def telecom_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A live server with the telecom domain alone (SQLite)."""
    store = tmp_path_factory.mktemp("store")
    settings = Settings(store_url=f"sqlite:///{store}/store.db", sandbox_url="sqlite://")
    with serve(create_app(settings, registry=DomainRegistry([telecom]))) as url:
        yield url
