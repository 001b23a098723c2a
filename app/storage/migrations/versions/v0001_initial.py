"""0001: the first schema: stations, SUTs, runs, phases, samples, results and the run log.

Written out operation by operation (not ``metadata.create_all``) so that this revision keeps
creating exactly this schema when the models evolve; ``tests/test_storage_schema.py`` checks
that upgrading to head gives the tables the models describe.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table('stations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('suts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('vendor', sa.String(length=200), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('serial', sa.String(length=200), nullable=False),
    sa.Column('raw_capacity_bytes', sa.BigInteger(), nullable=False),
    sa.Column('drive_count', sa.Integer(), nullable=False),
    sa.Column('drive_type', sa.String(length=20), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('vendor', 'model', 'serial', name='uq_suts_identity')
    )
    op.create_table('runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=64), nullable=False),
    sa.Column('station_id', sa.Integer(), nullable=True),
    sa.Column('sut_id', sa.Integer(), nullable=True),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('method_name', sa.String(length=100), nullable=False),
    sa.Column('method_version', sa.String(length=50), nullable=False),
    sa.Column('method_compliant', sa.Boolean(), nullable=False),
    sa.Column('taxonomy', sa.String(length=50), nullable=False),
    sa.Column('lab', sa.String(length=50), nullable=False),
    sa.Column('operator', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('started_wall', sa.String(length=40), nullable=False),
    sa.Column('finished_wall', sa.String(length=40), nullable=True),
    sa.Column('t0', sa.Float(), nullable=False),
    sa.Column('planned_s', sa.Float(), nullable=False),
    sa.Column('duration_s', sa.Float(), nullable=True),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('workload_engine', sa.Text(), nullable=False),
    sa.Column('writer_host', sa.String(length=200), nullable=True),
    sa.Column('writer_pid', sa.Integer(), nullable=True),
    sa.Column('heartbeat_wall', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['station_id'], ['stations.id'], ),
    sa.ForeignKeyConstraint(['sut_id'], ['suts.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid')
    )
    op.create_index(op.f('ix_runs_started_wall'), 'runs', ['started_wall'], unique=False)
    op.create_index(op.f('ix_runs_status'), 'runs', ['status'], unique=False)
    op.create_table('events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('t', sa.Float(), nullable=False),
    sa.Column('level', sa.String(length=10), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_events_run_t', 'events', ['run_id', 't'], unique=False)
    op.create_table('histograms',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('profile', sa.String(length=50), nullable=False),
    sa.Column('bins', sa.JSON(), nullable=False),
    sa.Column('confidence_ms', sa.JSON(), nullable=False),
    sa.Column('ceiling_ms', sa.Float(), nullable=True),
    sa.Column('above_ceiling', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_histograms_run_id'), 'histograms', ['run_id'], unique=False)
    op.create_table('instruments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=30), nullable=False),
    sa.Column('vendor', sa.String(length=200), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('serial', sa.String(length=200), nullable=False),
    sa.Column('firmware', sa.String(length=200), nullable=False),
    sa.Column('resource', sa.String(length=300), nullable=False),
    sa.Column('driver', sa.String(length=100), nullable=False),
    sa.Column('calibration_date', sa.String(length=40), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'role', name='uq_instruments_run_role')
    )
    op.create_table('intervals',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('profile', sa.String(length=50), nullable=True),
    sa.Column('idx', sa.Integer(), nullable=False),
    sa.Column('start_s', sa.Float(), nullable=False),
    sa.Column('end_s', sa.Float(), nullable=False),
    sa.Column('avg_power_w', sa.Float(), nullable=True),
    sa.Column('n_power_samples', sa.Integer(), nullable=False),
    sa.Column('ops_rate', sa.Float(), nullable=True),
    sa.Column('ops_unit', sa.String(length=20), nullable=False),
    sa.Column('avg_response_ms', sa.Float(), nullable=True),
    sa.Column('ep', sa.Float(), nullable=True),
    sa.Column('wma', sa.Float(), nullable=True),
    sa.Column('in_measurement', sa.Boolean(), nullable=False),
    sa.Column('stable', sa.Boolean(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_intervals_run_phase', 'intervals', ['run_id', 'phase_index', 'idx'],
                    unique=False)
    op.create_table('metrics',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=50), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('unit', sa.String(length=20), nullable=False),
    sa.Column('valid', sa.Boolean(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('run_length_s', sa.Float(), nullable=False),
    sa.Column('avg_power_w', sa.Float(), nullable=True),
    sa.Column('ops_rate', sa.Float(), nullable=True),
    sa.Column('ops_unit', sa.String(length=20), nullable=False),
    sa.Column('avg_response_ms', sa.Float(), nullable=True),
    sa.Column('phase_index', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'name', name='uq_metrics_run_name')
    )
    op.create_table('phases',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('idx', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('profile', sa.String(length=50), nullable=True),
    sa.Column('planned_s', sa.Float(), nullable=False),
    sa.Column('stabilisation_intervals', sa.Integer(), nullable=False),
    sa.Column('measurement_intervals', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('t_start', sa.Float(), nullable=True),
    sa.Column('t_end', sa.Float(), nullable=True),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('read_ios', sa.BigInteger(), nullable=True),
    sa.Column('write_ios', sa.BigInteger(), nullable=True),
    sa.Column('read_bytes', sa.BigInteger(), nullable=True),
    sa.Column('write_bytes', sa.BigInteger(), nullable=True),
    sa.Column('runtime_s', sa.Float(), nullable=True),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('engine', sa.Text(), nullable=True),
    sa.Column('job_text', sa.Text(), nullable=True),
    sa.Column('workload_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'idx', name='uq_phases_run_idx')
    )
    op.create_table('power_samples',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('t', sa.Float(), nullable=False),
    sa.Column('watts', sa.Float(), nullable=True),
    sa.Column('volts', sa.Float(), nullable=True),
    sa.Column('amps', sa.Float(), nullable=True),
    sa.Column('pf', sa.Float(), nullable=True),
    sa.Column('freq', sa.Float(), nullable=True),
    sa.Column('range_v', sa.Float(), nullable=True),
    sa.Column('range_a', sa.Float(), nullable=True),
    sa.Column('uncertainty_pct', sa.Float(), nullable=True),
    sa.Column('flags', sa.String(length=40), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_power_samples_run_t', 'power_samples', ['run_id', 't'], unique=False)
    op.create_table('search_results',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('profile', sa.String(length=50), nullable=False),
    sa.Column('queue_depth', sa.Integer(), nullable=False),
    sa.Column('jobs', sa.Integer(), nullable=False),
    sa.Column('ops_rate', sa.Float(), nullable=True),
    sa.Column('ops_unit', sa.String(length=20), nullable=False),
    sa.Column('avg_response_ms', sa.Float(), nullable=True),
    sa.Column('rate_read_iops', sa.Integer(), nullable=True),
    sa.Column('rate_write_iops', sa.Integer(), nullable=True),
    sa.Column('probes', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_search_results_run_id'), 'search_results', ['run_id'], unique=False)
    op.create_table('temperature_samples',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('t', sa.Float(), nullable=False),
    sa.Column('celsius', sa.Float(), nullable=True),
    sa.Column('flags', sa.String(length=40), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_temperature_samples_run_t', 'temperature_samples', ['run_id', 't'],
                    unique=False)
    op.create_table('workload_intervals',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('t_start', sa.Float(), nullable=False),
    sa.Column('t_end', sa.Float(), nullable=False),
    sa.Column('read_ios', sa.BigInteger(), nullable=False),
    sa.Column('write_ios', sa.BigInteger(), nullable=False),
    sa.Column('read_bytes', sa.BigInteger(), nullable=False),
    sa.Column('write_bytes', sa.BigInteger(), nullable=False),
    sa.Column('avg_resp_ms', sa.Float(), nullable=True),
    sa.Column('max_resp_ms', sa.Float(), nullable=True),
    sa.Column('host', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_workload_intervals_run_t', 'workload_intervals', ['run_id', 't_start'],
                    unique=False)


def downgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.drop_index('ix_workload_intervals_run_t', table_name='workload_intervals')
    op.drop_table('workload_intervals')
    op.drop_index('ix_temperature_samples_run_t', table_name='temperature_samples')
    op.drop_table('temperature_samples')
    op.drop_index(op.f('ix_search_results_run_id'), table_name='search_results')
    op.drop_table('search_results')
    op.drop_index('ix_power_samples_run_t', table_name='power_samples')
    op.drop_table('power_samples')
    op.drop_table('phases')
    op.drop_table('metrics')
    op.drop_index('ix_intervals_run_phase', table_name='intervals')
    op.drop_table('intervals')
    op.drop_table('instruments')
    op.drop_index(op.f('ix_histograms_run_id'), table_name='histograms')
    op.drop_table('histograms')
    op.drop_index('ix_events_run_t', table_name='events')
    op.drop_table('events')
    op.drop_index(op.f('ix_runs_status'), table_name='runs')
    op.drop_index(op.f('ix_runs_started_wall'), table_name='runs')
    op.drop_table('runs')
    op.drop_table('suts')
    op.drop_table('stations')
