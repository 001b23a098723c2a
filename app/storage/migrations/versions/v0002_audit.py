"""0002: ``audit_entries``, the append-only QA trail of a run (notes and dispositions).

Written op by op like 0001. UPDATE and DELETE on the table are refused by a trigger on SQLite
and PostgreSQL, so the trail cannot be rewritten even outside StorWatt; deleting a whole run
(``ON DELETE CASCADE``) still removes its entries with it.
"""

from __future__ import annotations

import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

REFUSAL = "audit entries are append-only: add a new entry instead of changing one"

# DELETE is allowed only through the cascade of a deleted run (a SQLite trigger cannot tell
# a cascade from a plain DELETE, so it lets a delete through only once the run is gone).
SQLITE_TRIGGERS = (
    "CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries "
    f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
    "CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries "
    "WHEN EXISTS (SELECT 1 FROM runs WHERE runs.id = OLD.run_id) "
    f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END",
)

POSTGRES_FUNCTION = f"""
CREATE FUNCTION audit_entries_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.id = OLD.run_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '{REFUSAL}';
END;
$$ LANGUAGE plpgsql
"""
POSTGRES_TRIGGER = ("CREATE TRIGGER audit_entries_append_only BEFORE UPDATE OR DELETE ON "
                    "audit_entries FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only()")


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table('audit_entries',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('disposition', sa.String(length=20), nullable=True),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('author', sa.String(length=200), nullable=False),
    sa.Column('created_wall', sa.String(length=40), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_audit_entries_run_id', 'audit_entries', ['run_id', 'id'], unique=False)
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)
    elif dialect == "postgresql":
        op.execute(POSTGRES_FUNCTION)
        op.execute(POSTGRES_TRIGGER)
