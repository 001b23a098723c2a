"""0012: an approval binds the facts and the verdict as shown, under its rules (issue 22).

Until 0011 an approval stored the record revision and one SHA-256 that covered the derived
verdict too, so any change of a compliance rule turned every approval NOT VALID. An approval
now also stores the hash's byte form (``hash_format``: ``storwatt-record/2`` hashes the
record's facts only), the verdict QA saw (``verdict_shown``) and the rules version that
derived it (``rules_version``); a sign-off given although the revision was SIMULATED or
NON-COMPLIANT, or an acceptance, keeps the confirmation that named why (``confirmation``).
Entries written before keep these NULL: their hashes stay checkable in the old form.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column("audit_entries", sa.Column("hash_format", sa.String(length=40),
                                             nullable=True))
    op.add_column("audit_entries", sa.Column("verdict_shown", sa.Text(), nullable=True))
    op.add_column("audit_entries", sa.Column("rules_version", sa.Integer(), nullable=True))
    op.add_column("audit_entries", sa.Column("confirmation", sa.Text(), nullable=True))
