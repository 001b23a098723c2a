"""0004: ``runs.stored_seq``, the last run event the database holds (journal import key).

The run writer numbers events and commits that number with them; importing a run journal
(``storwatt db recover``, or the next start of the station) applies only events numbered
above it, which makes the import idempotent. Runs stored before this revision keep NULL.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("runs", sa.Column("stored_seq", sa.BigInteger(), nullable=True))
