"""minted tasks: generated tasks a training run asked the server for

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "minted_tasks",
        sa.Column("task_id", sa.String(200), nullable=False),
        sa.Column("domain", sa.String(64), nullable=False),
        sa.Column("family", sa.String(100), nullable=False),
        sa.Column("draw_index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("task", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("task_id", name="pk_minted_tasks"),
    )
    op.create_index("ix_minted_tasks_domain", "minted_tasks", ["domain"])


def downgrade() -> None:
    op.drop_index("ix_minted_tasks_domain", table_name="minted_tasks")
    op.drop_table("minted_tasks")
