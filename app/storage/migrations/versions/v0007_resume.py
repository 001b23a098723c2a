"""0007: resuming an INTERRUPTED run in the same run record (``app/station/resume.py``).

Adds ``run_resumptions`` (one row per continuation of a run) and ``histograms.attempt``: a
resumed run may redo a completed phase (the active sequence restarts at its first profile),
and the earlier attempt's histogram stays stored beside the new one. Existing histograms
belong to attempt 1, the only attempt that ever computed one before this revision.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table(
        "run_resumptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("t", sa.Float(), nullable=False),
        sa.Column("wall", sa.String(length=40), nullable=False),
        sa.Column("restart_phase", sa.Integer(), nullable=False),
        sa.Column("cut_phase", sa.Integer(), nullable=True),
        sa.Column("carried", sa.JSON(), nullable=False),
        sa.Column("redone", sa.JSON(), nullable=False),
        sa.Column("interruption", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "number", name="uq_run_resumptions_run_number"))
    op.add_column("histograms", sa.Column("attempt", sa.Integer(), nullable=False,
                                          server_default="1"))
