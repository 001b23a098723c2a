"""0006: ``search_results.note``, why a search figure is not intensity 100 within tolerance.

The intensity search refines between its probes and says "load generator limit reached" when
the probes never reach the response-time limit; a re-check before an active profile that
lowers the intensity stores a new result saying why (docs/method-notes.md §2). Runs stored
before this revision keep an empty note: their searches did neither.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("search_results", sa.Column("note", sa.Text(), nullable=False,
                                              server_default=""))
