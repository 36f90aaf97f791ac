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
