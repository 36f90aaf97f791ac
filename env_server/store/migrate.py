"""Apply the Alembic migrations under `migrations/` to a store URL."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import migrations


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at the packaged migrations and at `url`."""
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(migrations.__file__).parent))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the store at `url` up to `revision`."""
    command.upgrade(alembic_config(url), revision)


def current(url: str) -> str | None:
    """The store's current revision (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    from env_server.store.store import make_store_engine

    engine = make_store_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def head() -> str | None:
    """The newest revision the packaged migrations define."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


class StoreNotMigratedError(RuntimeError):
    """The store is not at the revision this code expects, and this process was told not to migrate it."""


def require_head(url: str) -> None:
    """Refuse a store behind (or ahead of) the code: a server must not write to a schema it does not know."""
    have, want = current(url), head()
    if have != want:
        raise StoreNotMigratedError(
            f"the store at {url} is at revision {have or 'none (empty)'} but this code needs {want}: "
            "run `groundstate db upgrade` first (or start the server without --no-migrate)"
        )
