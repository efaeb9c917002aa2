"""The ladder's first schema: teams, bots, versions, uploads, deal groups, matches and
their seats, seat results, ratings (``referee/ladder/storage/schema.py`` describes each).

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deal_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("closed_at", sa.Double(), nullable=True),
        sa.CheckConstraint(
            "purpose IN ('ranked', 'validation')", name=op.f("ck_deal_groups_purpose")
        ),
        sa.CheckConstraint("size BETWEEN 1 AND 24", name=op.f("ck_deal_groups_size")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deal_groups")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=True),
        sa.Column("key_hash", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.Column("key_created_at", sa.Double(), nullable=True),
        sa.Column("house", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "(key_id IS NULL) = (key_hash IS NULL)", name=op.f("ck_teams_key_whole")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("key_id", name=op.f("uq_teams_key_id")),
        sa.UniqueConstraint("name", name=op.f("uq_teams_name")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_bots_team_id_teams")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bots")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_bots_team_id_name")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("seating", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("queued_at", sa.Double(), nullable=False),
        sa.Column("worker", sa.String(length=100), nullable=True),
        sa.Column("lease_token", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.Double(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.Double(), nullable=True),
        sa.Column("finished_at", sa.Double(), nullable=True),
        sa.Column("log_path", sa.Text(), nullable=True),
        sa.Column("log_hash", sa.String(length=64), nullable=True),
        sa.Column("log_signed_by", sa.String(length=64), nullable=True),
        sa.Column("hands", sa.Integer(), nullable=True),
        sa.Column("duration_s", sa.Double(), nullable=True),
        sa.Column("failure", sa.String(length=40), nullable=True),
        sa.Column("failure_detail", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "state IN ('scheduled', 'running', 'finished', 'failed', 'cancelled')",
            name=op.f("ck_matches_state"),
        ),
        sa.ForeignKeyConstraint(
            ["group_id"], ["deal_groups.id"], name=op.f("fk_matches_group_id_deal_groups")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
        sa.UniqueConstraint("group_id", "seating", name=op.f("uq_matches_group_id_seating")),
    )
    op.create_index(op.f("ix_matches_state_finished_at"), "matches", ["state", "finished_at"])
    op.create_index(
        op.f("ix_matches_state_priority_queued_at"), "matches", ["state", "priority", "queued_at"]
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("archive_sha256", sa.String(length=64), nullable=True),
        sa.Column("archive_format", sa.String(length=8), nullable=True),
        sa.Column("archive_bytes", sa.Integer(), nullable=False),
        sa.Column("unpacked_bytes", sa.Integer(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.Column("manifest", sa.Text(), nullable=False),
        sa.Column("runtime", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("stderr_tail", sa.Text(), nullable=False),
        sa.Column("uploaded_at", sa.Double(), nullable=False),
        sa.Column("state_at", sa.Double(), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("rated_groups", sa.Integer(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("failed_matches", sa.Integer(), nullable=False),
        sa.Column("last_played_at", sa.Double(), nullable=True),
        sa.Column("files_removed_at", sa.Double(), nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'active', 'rejected', 'retired')", name=op.f("ck_versions_state")
        ),
        sa.CheckConstraint(
            "(archive_sha256 IS NULL) = (runtime IN ('builtin', 'remote'))",
            name=op.f("ck_versions_archive"),
        ),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name=op.f("fk_versions_bot_id_bots")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_versions")),
        sa.UniqueConstraint("bot_id", "number", name=op.f("uq_versions_bot_id_number")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_versions_state_sigma"), "versions", ["state", "sigma"])
    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.String(length=40), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.CheckConstraint("seat BETWEEN 0 AND 3", name=op.f("ck_match_seats_seat")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_seats_match_id_matches")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_match_seats_version_id_versions")
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_match_seats")),
    )
    op.create_index(op.f("ix_match_seats_version_id"), "match_seats", ["version_id"])
    op.create_table(
        "ratings",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("at", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["deal_groups.id"], name=op.f("fk_ratings_group_id_deal_groups")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_ratings_version_id_versions")
        ),
        sa.PrimaryKeyConstraint("version_id", "group_id", name=op.f("pk_ratings")),
    )
    op.create_index(op.f("ix_ratings_version_id_at"), "ratings", ["version_id", "at"])
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.Double(), nullable=False),
        sa.Column("archive_bytes", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=True),
        sa.Column("refused", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_uploads_team_id_teams")),
        sa.ForeignKeyConstraint(
            ["version_id"], ["versions.id"], name=op.f("fk_uploads_version_id_versions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uploads")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_uploads_team_id_at"), "uploads", ["team_id", "at"])
    op.create_table(
        "seat_results",
        sa.Column("match_id", sa.String(length=40), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("hands_won", sa.Integer(), nullable=False),
        sa.Column("scores", sa.Text(), nullable=False),
        sa.Column("timeouts", sa.Integer(), nullable=False),
        sa.Column("illegal_defaults", sa.Integer(), nullable=False),
        sa.Column("absent_turns", sa.Integer(), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("disconnects", sa.Integer(), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("think_ms", sa.Integer(), nullable=False),
        sa.Column("crashed", sa.Boolean(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("crash", sa.Text(), nullable=False),
        sa.Column("breach", sa.Text(), nullable=False),
        sa.Column("stderr_path", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id", "seat"],
            ["match_seats.match_id", "match_seats.seat"],
            name=op.f("fk_seat_results_match_id_match_seats"),
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_seat_results")),
    )


def downgrade() -> None:
    op.drop_table("seat_results")
    op.drop_index(op.f("ix_uploads_team_id_at"), table_name="uploads")
    op.drop_table("uploads")
    op.drop_index(op.f("ix_ratings_version_id_at"), table_name="ratings")
    op.drop_table("ratings")
    op.drop_index(op.f("ix_match_seats_version_id"), table_name="match_seats")
    op.drop_table("match_seats")
    op.drop_index(op.f("ix_versions_state_sigma"), table_name="versions")
    op.drop_table("versions")
    op.drop_index(op.f("ix_matches_state_priority_queued_at"), table_name="matches")
    op.drop_index(op.f("ix_matches_state_finished_at"), table_name="matches")
    op.drop_table("matches")
    op.drop_table("bots")
    op.drop_table("teams")
    op.drop_table("deal_groups")
