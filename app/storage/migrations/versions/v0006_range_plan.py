"""0006: ``runs.range_plan``, the fixed ranges the testing pass held (method-notes §3).

The range plan a run's ranging pass found (or the one the range advisor reused) is stored as
JSON (``app.sequencer.range_plan.RangePlan.to_json``) so a later run of the same SUT may reuse
it. Runs stored before this revision keep NULL: they were measured on the ranges configured.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("runs", sa.Column("range_plan", sa.JSON(), nullable=True))
