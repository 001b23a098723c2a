"""0013: ``search_results.generator``, what the load generator alone reached per listed step.

Before its probes, each searched profile's job file runs on fio's null engine at every listed
step; a search result above the method's share of that ceiling says "load generator limit
reached" (docs/method-notes.md §2). Runs stored before this revision have none (NULL): their
searches did not measure it.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("search_results", sa.Column("generator", sa.JSON(), nullable=True))
