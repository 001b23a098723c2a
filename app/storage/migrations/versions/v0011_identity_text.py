"""0011: instrument identities as TEXT, so a run stores the same on SQLite and PostgreSQL.

The identity a meter or daemon reports is not the station's to bound: two PTDaemon channels
combined into one identity made 242 characters, three 271, and ``instruments.model`` was
VARCHAR(200). SQLite ignores a VARCHAR's length, PostgreSQL refuses the row, so the same run
stored on one and not the other (issue 24 item 7). The identity columns of ``instruments``
and ``power_inputs`` become TEXT; the fields the station bounds at entry (SUT identity, input
names, operator) keep their lengths and are refused past them where they are typed.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

#: (column, its former length) of each table's identity
IDENTITY = (("vendor", 200), ("model", 200), ("serial", 200), ("firmware", 200),
            ("resource", 300), ("driver", 100), ("calibration_date", 40))


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    for table in ("instruments", "power_inputs"):  # small tables, referenced by none
        with op.batch_alter_table(table) as batch:
            for column, length in IDENTITY:
                batch.alter_column(column, type_=sa.Text(), existing_type=sa.String(length),
                                   existing_nullable=False)

