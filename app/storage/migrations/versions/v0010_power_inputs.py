"""0008: several power inputs per run — who read each input, and each input's readings.

Adds ``power_inputs`` (one row per configured input: name, element, wiring, the accuracy
formula, the identity of its meter) and ``power_input_samples`` (each input's reading at each
sample instant, keyed by the instant of the total it was summed into). Runs stored before
this revision had one meter: they get no rows, and every view shows their one power series as
before.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table(
        "power_inputs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("element", sa.Integer(), nullable=True),
        sa.Column("wiring", sa.String(length=10), nullable=False),
        sa.Column("accuracy", sa.Text(), nullable=False),
        sa.Column("vendor", sa.String(length=200), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("serial", sa.String(length=200), nullable=False),
        sa.Column("firmware", sa.String(length=200), nullable=False),
        sa.Column("resource", sa.String(length=300), nullable=False),
        sa.Column("driver", sa.String(length=100), nullable=False),
        sa.Column("calibration_date", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "name", name="uq_power_inputs_run_name"))
    op.create_table(
        "power_input_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("input", sa.String(length=100), nullable=False),
        sa.Column("t_total", sa.Float(), nullable=False),
        sa.Column("t", sa.Float(), nullable=False),
        *(sa.Column(name, sa.Float(), nullable=True) for name in (
            "watts", "volts", "amps", "pf", "freq", "range_v", "range_a", "uncertainty_pct")),
        sa.Column("flags", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"))
    op.create_index("ix_power_input_samples_run_t", "power_input_samples",
                    ["run_id", "t_total"])
