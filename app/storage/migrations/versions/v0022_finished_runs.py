"""0022: the database enforces who may write what (issue 39, docs/security.md).

**Finished** means ``runs.status`` is COMPLETED, ABORTED or FAILED. RUNNING and INTERRUPTED
runs are unfinished: the writer, a resume (INTERRUPTED → RUNNING), ``db recover`` (journal
events after the stored ones) and the lab sender (it inserts a run as RUNNING and writes the
final status last, in the same transaction as the run's last rows) all write only while a run
is unfinished. Once finished, a run's facts — its fact columns and every row of its child
tables — are immutable to every writer but the schema owner (who can rewrite anything; then
the bundle and the signed hash are the evidence). What stays allowed on a finished run:
audit entries (append-only since 0002), record-hash cache rows (sealed, 0021), and on the run
row the writer's bookkeeping (host, pid, boot, heartbeat, stored event number).

On **SQLite** (a station's single-user file) triggers refuse any change of a finished run's
facts, and its deletion, to every writer: an edit needs the triggers dropped first —
deliberate work that the recomputed record hash then shows. Its audit entries record the
station's name and the OS account (written by ``app/storage/audit.py``: the file has one user).

On **PostgreSQL** (the lab server) statement-level triggers additionally bind every run to
the login that inserted it (``runs.writer_role``, revision 0021): a login that is neither
the schema owner nor a superuser changes only its own unfinished runs; audit entries record
``session_user`` in ``db_role`` (the client cannot set it; ``SET ROLE`` does not change it);
approvals and dispositions are inserted only by members of ``storwatt_qa``; a station login
adds audit entries only to its own runs; nobody but the owner renames the shared station and
SUT rows. Every function runs with its search path pinned, so a temporary table a login
creates never answers the guard's lookups. The roles themselves are set up by the owner
(``storwatt db roles``, docs/storage.md "Database roles").
"""

from __future__ import annotations

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

FINISHED = ("COMPLETED", "ABORTED", "FAILED")
_FINISHED_SQL = "(" + ", ".join(f"'{s}'" for s in FINISHED) + ")"

#: the run row's facts (the record hash's "run", "configuration", "method" and "instruments"
#: come from these) and who stored it (``writer_role``, provenance); the rest is the writer's
#: bookkeeping. Written out so this revision keeps its meaning whatever the code does later
RUN_FACTS = ("uuid", "station_id", "sut_id", "config", "method_name", "method_version",
             "method_compliant", "method_json", "method_sha256", "taxonomy", "lab", "operator",
             "status", "started_wall", "finished_wall", "t0", "planned_s", "duration_s",
             "error", "workload_engine", "range_plan", "writer_role")

#: every table holding a run's rows (by ``run_id``)
CHILD_TABLES = ("phases", "phase_attempts", "run_resumptions", "power_samples",
                "temperature_samples", "workload_intervals", "histograms", "intervals",
                "metrics", "search_results", "instruments", "events", "power_inputs",
                "power_input_samples")

REFUSAL = "refused: run is finished, its facts are immutable (docs/security.md)"


def _sqlite_changed(old: str, new: str) -> str:
    # JSON columns compare as text on SQLite
    return " OR ".join(f"{new}.{c} IS NOT {old}.{c}" for c in RUN_FACTS)


def sqlite_statements() -> list[str]:
    out = [f"CREATE TRIGGER runs_finished_facts BEFORE UPDATE ON runs "
           f"WHEN OLD.status IN {_FINISHED_SQL} AND ({_sqlite_changed('OLD', 'NEW')}) "
           f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"]
    # a whole finished run is not deleted either (its children then go by the cascade, which
    # their triggers let through: the run's row is gone by then)
    out.append(f"CREATE TRIGGER runs_finished_delete BEFORE DELETE ON runs "
               f"WHEN OLD.status IN {_FINISHED_SQL} "
               f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END")
    for table in CHILD_TABLES:
        # an UPDATE is checked on the run a row comes from and on the run it moves to
        for op, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            finished = " OR ".join(f"(SELECT status FROM runs WHERE id = {row}.run_id) IN "
                                   f"{_FINISHED_SQL}" for row in rows)
            out.append(f"CREATE TRIGGER {table}_finished_{op.lower()} BEFORE {op} ON {table} "
                       f"WHEN {finished} BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END")
    return out


POSTGRES_FUNCTIONS = ["""
CREATE FUNCTION storwatt_session_kind() RETURNS text LANGUAGE plpgsql STABLE
{PINNED} AS $$
-- 'owner' (superuser, or a member of the role owning the schema's tables), 'qa' (a member
-- of storwatt_qa) or 'station' (any other login: bound to the runs it inserted)
BEGIN
    IF current_setting('is_superuser') = 'on' THEN  -- the server's own flag: no catalog query
        RETURN 'owner';
    END IF;
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = session_user)
       OR pg_has_role(session_user, (SELECT relowner FROM pg_class
                                     WHERE oid = 'runs'::regclass), 'MEMBER') THEN
        RETURN 'owner';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storwatt_qa')
       AND pg_has_role(session_user, 'storwatt_qa', 'MEMBER') THEN
        RETURN 'qa';
    END IF;
    RETURN 'station';
END $$""", f"""
CREATE FUNCTION storwatt_guard_run() RETURNS trigger LANGUAGE plpgsql
{{PINNED}} AS $$
BEGIN
    IF storwatt_session_kind() = 'owner' THEN
        IF TG_OP = 'INSERT' AND NEW.writer_role IS NULL THEN
            NEW.writer_role := session_user;
        END IF;
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        NEW.writer_role := session_user;
        RETURN NEW;
    END IF;
    IF OLD.writer_role IS DISTINCT FROM session_user THEN
        RAISE EXCEPTION 'refused: run % was stored by role %, not %: a station changes only '
            'its own runs (docs/security.md)', OLD.uuid, coalesce(OLD.writer_role, '(none)'),
            session_user;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'refused: a station never deletes a run (docs/security.md)';
    END IF;
    IF NEW.writer_role IS DISTINCT FROM OLD.writer_role AND NEW.writer_role IS NOT NULL THEN
        RAISE EXCEPTION 'refused: run % stays stored by role %: the server records who '
            'stored a run (docs/security.md)', OLD.uuid, OLD.writer_role;
    END IF;
    NEW.writer_role := OLD.writer_role;  -- a copy from a station's file sends NULL
    IF OLD.status IN {_FINISHED_SQL} AND
       ({' OR '.join(f'NEW.{c} IS DISTINCT FROM OLD.{c}' for c in RUN_FACTS)
         .replace('NEW.config IS DISTINCT FROM OLD.config',
                  'NEW.config::text IS DISTINCT FROM OLD.config::text')
         .replace('NEW.method_json IS DISTINCT FROM OLD.method_json',
                  'NEW.method_json::text IS DISTINCT FROM OLD.method_json::text')
         .replace('NEW.range_plan IS DISTINCT FROM OLD.range_plan',
                  'NEW.range_plan::text IS DISTINCT FROM OLD.range_plan::text')}) THEN
        RAISE EXCEPTION 'refused: run % is finished, its facts are immutable '
            '(docs/security.md)', OLD.uuid;
    END IF;
    RETURN NEW;
END $$""", f"""
CREATE FUNCTION storwatt_guard_run_rows() RETURNS trigger LANGUAGE plpgsql
{{PINNED}} AS $$
-- statement level: every run the statement's rows belong to (transition table "touched");
-- a station writing its own unfinished run, the common case, costs this one query
DECLARE
    bad record;
BEGIN
    SELECT r.uuid, r.writer_role, r.status INTO bad
      FROM (SELECT DISTINCT run_id FROM touched) t JOIN runs r ON r.id = t.run_id
     WHERE r.writer_role IS DISTINCT FROM session_user OR r.status IN {_FINISHED_SQL}
     LIMIT 1;
    IF FOUND AND storwatt_session_kind() <> 'owner' THEN
        IF bad.writer_role IS DISTINCT FROM session_user THEN
            RAISE EXCEPTION 'refused: run % was stored by role %, not %: a station changes '
                'only its own runs (docs/security.md)', bad.uuid,
                coalesce(bad.writer_role, '(none)'), session_user;
        END IF;
        RAISE EXCEPTION 'refused: run % is finished, its facts are immutable '
            '(docs/security.md)', bad.uuid;
    END IF;
    RETURN NULL;
END $$""", """
CREATE FUNCTION storwatt_guard_audit_entry() RETURNS trigger LANGUAGE plpgsql
{PINNED} AS $$
DECLARE
    kind text := storwatt_session_kind();
BEGIN
    IF kind = 'owner' THEN  -- a copy keeps who made the entry where it was made
        NEW.db_role := coalesce(NEW.db_role, session_user);
        RETURN NEW;
    END IF;
    NEW.db_role := session_user;
    IF NEW.kind IN ('approval', 'disposition') AND kind <> 'qa' THEN
        RAISE EXCEPTION 'refused: only members of storwatt_qa approve or give a disposition, '
            'not role % (docs/security.md)', session_user;
    END IF;
    IF kind = 'station' AND (SELECT writer_role FROM runs WHERE id = NEW.run_id)
                            IS DISTINCT FROM session_user THEN
        RAISE EXCEPTION 'refused: role % adds audit entries only to runs it stored '
            '(docs/security.md)', session_user;
    END IF;
    RETURN NEW;
END $$"""]


#: the shared rows a run points to, and the columns that name it in every list of runs
NAMED_ROWS = {"stations": ("name",), "suts": ("vendor", "model", "serial")}


def _names_guard(table: str, columns: tuple[str, ...]) -> str:
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in columns)
    return f"""
CREATE FUNCTION storwatt_guard_{table}() RETURNS trigger LANGUAGE plpgsql
{{PINNED}} AS $$
BEGIN
    IF ({changed}) AND storwatt_session_kind() <> 'owner' THEN
        RAISE EXCEPTION 'refused: a {table} row names every run that points to it; only the '
            'schema owner renames it (docs/security.md)';
    END IF;
    RETURN NEW;
END $$"""


def postgres_statements(schema: str = "public") -> list[str]:
    """The guard for the tables of ``schema``. Each function runs with its search path
    pinned to the system catalog and that schema, temporary objects last: a station login
    may create temporary tables, and one named ``runs`` or ``pg_roles`` must not answer the
    guard's lookups."""
    pinned = f'SET search_path = pg_catalog, "{schema}", pg_temp'
    functions = POSTGRES_FUNCTIONS + [_names_guard(t, c) for t, c in NAMED_ROWS.items()]
    out = [f.replace("{PINNED}", pinned) for f in functions]
    for table in NAMED_ROWS:  # the writer updates a SUT's latest capacity, never its name
        out.append(f"CREATE TRIGGER {table}_guard BEFORE UPDATE ON {table} FOR EACH ROW "
                   f"EXECUTE FUNCTION storwatt_guard_{table}()")
    out.append("CREATE TRIGGER runs_guard BEFORE INSERT OR UPDATE OR DELETE ON runs "
               "FOR EACH ROW EXECUTE FUNCTION storwatt_guard_run()")
    out.append("CREATE TRIGGER audit_entries_guard BEFORE INSERT ON audit_entries "
               "FOR EACH ROW EXECUTE FUNCTION storwatt_guard_audit_entry()")
    for table in CHILD_TABLES:
        for op, ref in (("INSERT", "NEW TABLE AS touched"), ("UPDATE", "NEW TABLE AS touched"),
                        ("DELETE", "OLD TABLE AS touched")):
            out.append(f"CREATE TRIGGER {table}_guard_{op.lower()} AFTER {op} ON {table} "
                       f"REFERENCING {ref} FOR EACH STATEMENT "
                       "EXECUTE FUNCTION storwatt_guard_run_rows()")
        # an UPDATE may move a row off a run: the rows it came from are checked too
        out.append(f"CREATE TRIGGER {table}_guard_update_from AFTER UPDATE ON {table} "
                   "REFERENCING OLD TABLE AS touched FOR EACH STATEMENT "
                   "EXECUTE FUNCTION storwatt_guard_run_rows()")
    return out


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    bind = op.get_bind()
    dialect = bind.dialect.name
    if dialect == "postgresql":
        schema = bind.exec_driver_sql("SELECT current_schema()").scalar_one()
        statements = postgres_statements(schema)
    else:
        statements = sqlite_statements() if dialect == "sqlite" else []
    for statement in statements:
        op.execute(statement)
