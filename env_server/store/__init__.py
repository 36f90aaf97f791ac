"""Control-plane persistence: episodes, events and scores (SQLAlchemy + Alembic)."""

from env_server.store.migrate import upgrade
from env_server.store.models import EpisodeRecord, EventRecord, ScoreRecord
from env_server.store.store import Store, make_store_engine

__all__ = ["EpisodeRecord", "EventRecord", "ScoreRecord", "Store", "make_store_engine", "upgrade"]
