"""0003: ``runs.writer_boot``, the boot the writing process belongs to.

A process id alone cannot tell a crashed run from a live one once the computer has restarted
(the number is reused), so the writer also records the boot id (see
:mod:`app.storage.liveness`). Existing rows keep NULL: they are judged by process and heartbeat.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("writer_boot", sa.String(length=100), nullable=True))
