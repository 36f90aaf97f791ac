"""idempotency keys: a resent tool call returns its first run's result instead of running again

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("episode_id", sa.String(32), nullable=False),
        sa.Column("key", sa.String(256), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["episode_id"],
            ["episodes.id"],
            name="fk_idempotency_keys_episode_id_episodes",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("episode_id", "key", name="pk_idempotency_keys"),
    )


def downgrade() -> None:
    op.drop_table("idempotency_keys")
