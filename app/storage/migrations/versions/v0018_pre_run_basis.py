"""0018: ``search_results.pre_run_basis``, a null-engine pre-run of a profile not searched.

Every profile the run executes has its job file run on fio's null engine first
(docs/method-notes.md §2): a searched one before its probes, and one that is not searched — MW2
at the rate derived from MW1, a trace replay at the trace's own pace — just before its active
phase. The latter's row holds the ceiling and pattern like a search's, and this column says on
what basis it ran instead of a search (NULL: a searched profile, as every row before this
revision was).
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("search_results", sa.Column("pre_run_basis", sa.Text(), nullable=True))
