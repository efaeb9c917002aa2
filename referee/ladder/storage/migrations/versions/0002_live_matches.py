"""Where a running match can be watched: its referee's public address and that referee's
id for it (``matches.live_address``, ``matches.live_id``), so that the ladder's web relays
the public events of matches its workers play.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-09
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("live_address", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("live_id", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("live_id")
        batch_op.drop_column("live_address")
