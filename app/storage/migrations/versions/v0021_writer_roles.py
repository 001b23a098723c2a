"""0021: who wrote what, and a record-hash cache row that proves where it came from (issue 39).

- ``runs.writer_role`` and ``audit_entries.db_role``: the database login that inserted the
  run or the entry. They are to be set by a server-side guard the client cannot bypass; that
  guard (finished runs immutable, approvals QA's alone) is not part of this revision yet
  (issue 39 stays open), so both columns are NULL for now and nothing reads them.
- ``record_hashes.seal``: an HMAC of the row under a key kept on the PC that computed it, never
  in the database (``app/storage/record_seal.py``). A view trusts a cached hash only when it
  carries this PC's seal; rows without one (every row stored before this revision, and any row
  a database writer adds by hand) are recomputed. The unique key now includes the seal, so a
  forged unsealed row never keeps the genuine, sealed one out.

No stored value changes and no record hash changes (none of these columns is a fact).
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

OLD_UNIQUE = "uq_record_hashes_revision_basis"
NEW_UNIQUE = "uq_record_hashes_revision_basis_seal"


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("runs", sa.Column("writer_role", sa.Text(), nullable=True))
    op.add_column("audit_entries", sa.Column("db_role", sa.Text(), nullable=True))
    with op.batch_alter_table("record_hashes") as batch:  # SQLite: the table is rebuilt
        batch.add_column(sa.Column("seal", sa.String(64), nullable=True))
        batch.drop_constraint(OLD_UNIQUE, type_="unique")
        batch.create_unique_constraint(NEW_UNIQUE, ["run_id", "revision", "hash_format",
                                                    "basis_sha256", "seal"])
