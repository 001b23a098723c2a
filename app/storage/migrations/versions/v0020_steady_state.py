"""0020: ``phases.steady_state``, the PTS steady-state verdict as the sequencer judged it.

A demand-intensity matrix's workload preconditioning runs rounds until the PTS steady state
(docs/method-notes.md §5). The verdict was computed again by the live plot, the report and
the sequencer, each with its own arguments, and never stored (issue 31). The sequencer now
judges it once, as each round closes, and the run writer keeps the latest verdict with its
phase as JSON (``app.storage.codec.steady_to_json``: steady, round_index, window_average,
range_pct, slope_excursion_pct, gave_up, reason; NaN as null). NULL for every other phase.

Runs stored before this revision are **not backfilled**: a verdict derived now by this
StorWatt's rules would be a second author, not what the station judged while the run went
on. Their reports and views say the verdict was not recorded; the standalone verifier still
derives the steady window from the rounds, as it does for every bundle. The same column on
SQLite and PostgreSQL; no stored value changes, and a phase without a verdict keeps its
record hash (an added field is hashed only when it holds a value, docs/storage.md).
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("phases", sa.Column("steady_state", sa.JSON(), nullable=True))
