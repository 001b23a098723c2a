"""0006: audited COM results and QA approvals in ``audit_entries`` (issue 14 items 11, 15).

A technician's heuristic COM result names the COM (``subject``) and its outcome (``outcome``:
passed / not-passed); QA's approval names the record revision it approved and that revision's
SHA-256 (``revision``, ``record_sha256``), so a later revision cannot borrow it. Notes and
dispositions keep the new columns NULL. The append-only triggers of 0002 stay in force: adding
a column does not touch them.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("audit_entries", sa.Column("subject", sa.String(length=50), nullable=True))
    op.add_column("audit_entries", sa.Column("outcome", sa.String(length=20), nullable=True))
    op.add_column("audit_entries", sa.Column("revision", sa.Integer(), nullable=True))
    op.add_column("audit_entries", sa.Column("record_sha256", sa.String(length=64),
                                             nullable=True))
