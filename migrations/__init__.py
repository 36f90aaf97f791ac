"""Alembic migrations of the control-plane store (episodes, events, scores)."""
