"""0015: ``record_hashes``, each revision's record hash kept with the run (issue 27).

A report or a view of a long run rebuilt the storwatt-record/2 facts hash every time (~40 % of
a 24 h export). The hash of each revision is now stored once, with the basis (a fast
fingerprint of the facts) it was computed on; a view uses it only while the run still has that
basis (``app/storage/record_cache.py``). Runs stored before this revision have no rows: their
first view computes and stores them.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table(
        "record_hashes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("hash_format", sa.String(length=40), nullable=False),
        sa.Column("basis_sha256", sa.String(length=64), nullable=False),
        sa.Column("facts_sha256", sa.String(length=64), nullable=False),
        sa.Column("record_sha256", sa.String(length=64), nullable=False),
        sa.Column("computed_wall", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "revision", "hash_format", "basis_sha256",
                            name="uq_record_hashes_revision_basis"))
