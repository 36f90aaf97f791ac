"""episodes, events, scores

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "episodes",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("task_id", sa.String(200), nullable=False),
        sa.Column("domain", sa.String(64), nullable=False),
        sa.Column("user_kind", sa.String(16), nullable=False),
        sa.Column("user_model", sa.String(200), nullable=False),
        sa.Column("user_prompt_version", sa.String(64), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("disposed", sa.Boolean(), nullable=False),
        sa.Column("user_done", sa.Boolean(), nullable=False),
        sa.Column("backend_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_episodes"),
    )
    op.create_index("ix_episodes_task_id", "episodes", ["task_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("episode_id", sa.String(32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["episode_id"], ["episodes.id"], name="fk_events_episode_id_episodes", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_events"),
        sa.UniqueConstraint("episode_id", "seq", name="uq_events_episode_id"),
    )
    op.create_index("ix_events_episode_id", "events", ["episode_id"])
    op.create_table(
        "scores",
        sa.Column("episode_id", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reward", sa.Integer(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["episode_id"], ["episodes.id"], name="fk_scores_episode_id_episodes", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("episode_id", name="pk_scores"),
    )


def downgrade() -> None:
    op.drop_table("scores")
    op.drop_index("ix_events_episode_id", table_name="events")
    op.drop_table("events")
    op.drop_index("ix_episodes_task_id", table_name="episodes")
    op.drop_table("episodes")
