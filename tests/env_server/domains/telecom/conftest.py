"""The telecom tests' app: the telecom domain alone, its sandboxes on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.domains.telecom import domain
from env_server.settings import Settings
from env_server.store import EpisodeRecord


@pytest.fixture
def client(tmp_path: Path, sandbox_url: str) -> Iterator[TestClient]:
    """The telecom domain on each backend; MCP accepts the test client's host."""
    settings = Settings(
        store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url=sandbox_url, mcp_allowed_hosts=["testserver"]
    )
    with TestClient(create_app(settings, registry=DomainRegistry([domain]))) as c:
        yield c
        service = c.app.state.episodes  # type: ignore[attr-defined]
        with service.store.session() as session:  # free the sandboxes of episodes left open (PostgreSQL)
            open_ids = session.scalars(
                select(EpisodeRecord.id).where(EpisodeRecord.disposed.is_(False))
            ).all()
        for episode_id in open_ids:
            service.dispose(episode_id)
