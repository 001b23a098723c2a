"""0014: indexes for the QA history's own queries (issue 27).

The history counts, filters, sorts and pages 100,000 runs in the database
(:mod:`app.storage.run_pages`): the taxonomy, station and SUT filters and their choice lists
look runs up by those columns; the metric columns' names and sorts read ``metrics`` by name
and value; the INVALID status and the verdict words read only the metrics that are not VALID.
Indexes only: no stored value changes.
"""

from __future__ import annotations

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

INDEXES = (("ix_runs_taxonomy", "runs", ["taxonomy"]),
           ("ix_runs_station_id", "runs", ["station_id"]),
           ("ix_runs_sut_id", "runs", ["sut_id"]),
           ("ix_metrics_name_value", "metrics", ["name", "value"]),
           ("ix_metrics_valid_run", "metrics", ["valid", "run_id"]))


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    for name, table, columns in INDEXES:
        op.create_index(name, table, columns, unique=False)
