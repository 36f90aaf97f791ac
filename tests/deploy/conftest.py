"""Fixtures of the production topology tests: executables that must exist under CI, private databases."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import IN_CI


def required_executable(name: str, package: str) -> str:
    """The path of `name`; skips the test without it, except under CI (.ci/run installs `package`)."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is required under CI (Debian package {package}; .ci/run installs it)")
        pytest.skip(f"{name} not installed (Debian package {package})")
    return path


@pytest.fixture
def pg_databases(pg_url: str) -> Iterator[tuple[str, str]]:
    """A private store database and a private sandbox database (as in production), dropped afterwards."""
    tag = uuid.uuid4().hex[:8]
    names = [f"gs_lb_test_store_{tag}", f"gs_lb_test_sandboxes_{tag}"]
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in names:
            conn.execute(text(f"CREATE DATABASE {name}"))
    base = pg_url.rsplit("/", 1)[0]
    try:
        yield f"{base}/{names[0]}", f"{base}/{names[1]}"
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()
