"""Alembic environment: the URL comes from the caller (groundstate db upgrade) or GROUNDSTATE_STORE_URL."""

from alembic import context
from sqlalchemy import Connection

from env_server.store.models import StoreBase
from env_server.store.store import make_store_engine

config = context.config
target_metadata = StoreBase.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from env_server.settings import Settings

    return Settings().store_url


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_store_engine(_url())
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
