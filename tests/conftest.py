"""Shared fixtures: a toy domain (also as an installed plug-in), per-test stores, both sandboxes, a client."""

from __future__ import annotations

import importlib
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select, text

from env_server.app import create_app
from env_server.domain.registry import DomainRegistry
from env_server.sandbox.postgres.naming import database_roles_pattern
from env_server.settings import DEFAULT_PG_URL, Settings
from env_server.store import EpisodeRecord
from tests.factories import register_entry_point
from tests.llm_server import llm_server, own_llm_server
from tests.toy_domain import domain as toy_domain

__all__ = ["llm_server", "own_llm_server"]  # fixtures serving the real SmolLM2 through llama.cpp

PG_URL = os.environ.get("GROUNDSTATE_TEST_PG_URL", DEFAULT_PG_URL)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _pg_available() -> bool:
    try:
        engine = create_engine(PG_URL)
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL URL; skips the test without a server, except under CI where that is a failure."""
    if not _pg_available():
        if IN_CI:
            pytest.fail(f"PostgreSQL is required under CI but {PG_URL} is unreachable")
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}")
    return PG_URL


@pytest.fixture
def fresh_pg_url(pg_url: str) -> Iterator[str]:
    """A new, empty PostgreSQL database of its own, dropped afterwards."""
    name = f"gs_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield pg_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            # slot roles are global to the cluster: they go with the database they served
            pattern = {"p": database_roles_pattern(name)}
            for role in conn.scalars(text("SELECT rolname FROM pg_roles WHERE rolname LIKE :p"), pattern):
                conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def sandbox_url(request: pytest.FixtureRequest) -> str:
    """Each test using this runs on both backends."""
    if request.param == "sqlite":
        return "sqlite://"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def toy_site(tmp_path: Path) -> Iterator[Path]:
    """The toy domain installed as a plug-in: an entry-point record in a site directory on `sys.path`."""
    site = tmp_path / "site"
    register_entry_point(site, "toybank", "tests.toy_domain:domain")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield site
    sys.path.remove(str(site))
    importlib.invalidate_caches()


@pytest.fixture
def toy_registry() -> DomainRegistry:
    return DomainRegistry([toy_domain])


@pytest.fixture
def settings(tmp_path: Path, sandbox_url: str) -> Settings:
    """A fresh store per test; sandboxes on the parametrised backend."""
    return Settings(store_url=f"sqlite:///{tmp_path}/store.db", sandbox_url=sandbox_url)


@pytest.fixture
def client(settings: Settings, toy_registry: DomainRegistry) -> Iterator[TestClient]:
    """An app client; afterwards every episode it left open is disposed of (frees PostgreSQL slots)."""
    with TestClient(create_app(settings, registry=toy_registry)) as c:
        yield c
        service = c.app.state.episodes  # type: ignore[attr-defined]
        with service.store.session() as session:
            still_open = select(EpisodeRecord.id).where(EpisodeRecord.disposed.is_(False))
            open_ids = session.scalars(still_open).all()
        for episode_id in open_ids:
            service.dispose(episode_id)
