"""0017: ``database_identity``, a random id written once per database.

Two databases at one path are told apart by it (issue 25: ``cp other.db runs.db`` over a
running station rewrites the same inode, so the file's device and inode stay the same), and
an audit entry records on which database it was made (issue 26). A SQLite file also carries
it in its header (``application_id`` StorWatt's mark, ``user_version`` 31 bits of the id),
where the run writer reads it before each commit without asking SQLite
(:mod:`app.storage.overwritten`). Existing databases get their id with this revision.
``audit_entries.made_on`` says on which database an entry was made (:mod:`app.storage.identity`).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import sqlalchemy as sa

from app.storage.overwritten import mark_sqlite_header  # the file header's own format

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    table = op.create_table(
        "database_identity",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("created_wall", sa.String(40), nullable=False))
    identity = uuid.uuid4().hex
    op.bulk_insert(table, [{"id": identity, "created_wall":
                            datetime.now(timezone.utc).isoformat(timespec="seconds")}])
    mark_sqlite_header(op.get_bind(), identity)
    # issue 26: the database each audit entry was made on (NULL: made before this revision)
    op.add_column("audit_entries", sa.Column("made_on", sa.Text(), nullable=True))
