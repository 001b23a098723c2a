"""0016: indexes for the QA history's own queries (issue 27).

The history counts, filters, sorts and pages 100,000 runs in the database
(:mod:`app.storage.run_pages`): the taxonomy, station and SUT filters and their choice lists
look runs up by those columns; the metric columns' names and sorts read ``metrics`` by name
and value; the INVALID status and the verdict words read only the metrics that are not VALID.
On SQLite, ``ix_runs_listing`` covers the listing's columns: SQLite reads a whole row to test
one column, and a run's row carries its configuration and resolved method (~10 KB of JSON), so
a free-text search over 100,000 runs read a gigabyte; through the index it reads the listing
alone. PostgreSQL keeps large JSON out of line (TOAST) and caps an index entry at ~2.7 KB (the
error text is unbounded), so it has no such index. Indexes only: no stored value changes.
"""

from __future__ import annotations

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

INDEXES = (("ix_runs_taxonomy", "runs", ["taxonomy"]),
           ("ix_runs_station_id", "runs", ["station_id"]),
           ("ix_runs_sut_id", "runs", ["sut_id"]),
           ("ix_metrics_name_value", "metrics", ["name", "value"]),
           ("ix_metrics_valid_run", "metrics", ["valid", "run_id"]))
#: the columns the history's search and pages read (schema.py: ix_runs_listing)
LISTING = ("started_wall", "uuid", "method_name", "method_version", "taxonomy", "lab",
           "operator", "status", "error", "station_id", "sut_id", "duration_s")


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    for name, table, columns in INDEXES:
        op.create_index(name, table, columns, unique=False)
    if op.get_bind().dialect.name == "sqlite":
        op.create_index("ix_runs_listing", "runs", list(LISTING), unique=False)
