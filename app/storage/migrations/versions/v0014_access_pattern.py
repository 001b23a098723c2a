"""0014: ``search_results.access_pattern``, the pattern fio drew in the null-engine pre-run.

Before each search the profile's own job file runs on fio's null engine with fio's per-IO log
on (drivers/fio/access_log.py); the measured read share, sequence, uniformity and each
stream's share, range and in-band curve are kept beside the generator's ceiling (0013), shown
in the reports and judged by the verdict (docs/method-notes.md §2). Runs stored before this
revision have none (NULL): the station did not measure it then.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("search_results", sa.Column("access_pattern", sa.JSON(), nullable=True))
