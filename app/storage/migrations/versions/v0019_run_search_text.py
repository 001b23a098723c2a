"""0019: ``runs.searched_text`` on PostgreSQL, the run's own searched words already lower-cased.

The QA history's free-text filter looks for each typed word in the run's own columns
(:func:`app.storage.history.narrowed`). PostgreSQL lower-cased the eight columns joined, for
every one of 100,000 runs on every filter change: measured with EXPLAIN ANALYZE, that per-row
``lower(… || …)`` was ~150–250 ms of the 238 ms "invalid" took (issue 27's goal: 150 ms), and
a stored lower-case column reads in ~40 ms. So PostgreSQL keeps the same text as a generated
column, which the server itself recomputes whenever a run's row changes: no writer, sender or
import has to maintain it, and a search finds exactly what it found before (same expression).
Adding it rewrites ``runs`` once (a few seconds per 100,000 runs, the table locked meanwhile).

SQLite has no such column: it tests each column with its ASCII-folding ``LIKE`` through the
covering index ``ix_runs_listing`` (revision 0016), already within the goal, and SQLite cannot
add a stored generated column to an existing table. No stored value changes; the record hash
reads no such column.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

#: the run's searched columns in the order the history joins them (app.storage.history)
SEARCHED = ("uuid", "method_name", "method_version", "taxonomy", "lab", "operator", "status",
            "error")
#: lower(coalesce(uuid, '') || ' ' || … || coalesce(error, '')), written out so this revision
#: keeps its meaning whatever the code does later
EXPRESSION = "lower(" + " || ' ' || ".join(f"coalesce({c}, '')" for c in SEARCHED) + ")"


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    if op.get_bind().dialect.name == "postgresql":
        op.add_column("runs", sa.Column("searched_text", sa.Text(),
                                        sa.Computed(EXPRESSION, persisted=True)))
