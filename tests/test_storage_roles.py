"""Database roles on a real PostgreSQL server (issues 26 and 39): the SQL docs/storage.md gives
(``storwatt db roles``' output) is run as written; a QA login reads runs and adds audit entries
and nothing else; a login that cannot store a run is refused before the run starts, naming the
missing rights; and the server's guard (revision 0022) refuses both attacks of issue 39."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support import pg_server
from app.cli.main import main
from app.storage import schema as s
from app.storage.audit import add_audit_entry, audit_entries
from app.storage.schema import AuditEntryRow, RecordHashRow
from app.storage.opening import open_database
from app.storage.rights import RUN_TABLES, MissingRightsError, check_write_rights
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from app.storage.repository import list_runs, load_run

DOCS = Path(__file__).resolve().parent.parent / "docs" / "storage.md"


#: the logins of docs/storage.md's example: two benches and one QA person
STATIONS, QA = ("bench_1", "bench_2"), ("qa_anna",)


def documented_grants() -> str:
    """The ```sql block of docs/storage.md's "Database roles" section, as written."""
    section = DOCS.read_text(encoding="utf-8").split("## Database roles", 1)[1]
    return re.search(r"```sql\n(.*?)```", section, re.S).group(1)


def test_the_documented_sql_is_what_db_roles_prints(capsys) -> None:
    from app.storage.roles import roles_sql

    assert documented_grants() == roles_sql(STATIONS, QA)
    argv = ["db", "roles"] + [a for n in STATIONS for a in ("--station", n)] + ["--qa", QA[0]]
    assert main(argv) == 0
    assert capsys.readouterr().out == documented_grants()


@pytest.mark.parametrize("name", ["Bench-1", "x; DROP TABLE runs", "storwatt_qa", ""])
def test_db_roles_refuses_a_login_name_it_would_not_write_into_sql(name, capsys) -> None:
    assert main(["db", "roles", "--station", name]) == 1
    err = capsys.readouterr().err
    assert err.startswith("storwatt db roles: login name") and err.count("\n") == 1


def test_every_run_table_is_checked() -> None:
    # the audit trail is QA's; stored record hashes are a cache any reader may add to; the
    # database's own identity is no run's rows
    assert set(RUN_TABLES) == set(s.Base.metadata.tables) - {
        AuditEntryRow.__tablename__, RecordHashRow.__tablename__, s.DatabaseIdentity.__tablename__}


@pytest.fixture(scope="module")
def roles():
    """(owner, station, qa) URLs on one throw-away server, the documented grants applied."""
    if pg_server.available():
        pytest.skip(pg_server.available())
    with pg_server.postgres_server() as owner:  # its own port and data folder
        open_database(owner).close()  # the owner creates the schema
        engine = sa.create_engine(owner)
        with engine.begin() as conn:  # the documented SQL, as written …
            conn.exec_driver_sql(documented_grants())
        engine.dispose()
        argv = ["db", "roles", "--station", STATIONS[0], "--station", STATIONS[1],
                "--qa", QA[0], "--db", owner]
        assert main(argv) == 0  # … and storwatt db roles applying it again changes nothing
        yield (owner, _as(owner, STATIONS[0]), _as(owner, QA[0]))


def _as(owner: str, login: str) -> str:
    """The URL of ``login`` on the owner's server (the test server trusts local logins)."""
    return owner.replace("//storwatt@", f"//{login}@")


def _store(url: str) -> str:
    database = open_database(url)
    writer = RunWriter(database)
    events = list(full_run(samples_per_phase=5))
    for event in events:
        writer(event)
    assert writer.close().in_database
    database.close()
    return events[0].run_id


def _refused(url: str, sql: str) -> None:
    engine = sa.create_engine(url)
    try:
        with pytest.raises(sa.exc.DBAPIError, match="permission denied|not allowed|refuse"):
            with engine.begin() as conn:
                conn.exec_driver_sql(sql)
    finally:
        engine.dispose()


@pytest.mark.process
def test_the_station_role_stores_runs_and_adds_audit_entries(roles) -> None:
    _, station, _ = roles
    database = open_database(station)
    try:
        check_write_rights(database)  # nothing missing
        run_id = _store(station)
        assert load_run(database, run_id).status.value == "COMPLETED"
        add_audit_entry(database, run_id, "note", "checked", "tech-bo")
    finally:
        database.close()
    _refused(station, "UPDATE audit_entries SET text = 'edited'")
    _refused(station, "DELETE FROM audit_entries")


@pytest.mark.process
def test_the_qa_role_reads_and_audits_and_nothing_else(roles) -> None:
    _, station, qa = roles
    run_id = _store(station)
    database = open_database(qa)
    try:
        assert run_id in {r.run_id for r in list_runs(database)}
        assert len(load_run(database, run_id).power) > 0
        add_audit_entry(database, run_id, "disposition", "EP figures checked", "qa-anna",
                        "accepted")
        assert [e.author for e in audit_entries(database, run_id)][-1] == "qa-anna"
    finally:
        database.close()
    _refused(qa, "INSERT INTO stations (name) VALUES ('qa-bench')")
    _refused(qa, "UPDATE runs SET status = 'COMPLETED'")
    _refused(qa, "DELETE FROM power_samples")
    _refused(qa, "UPDATE audit_entries SET text = 'edited'")
    _refused(qa, "DELETE FROM audit_entries")


@pytest.mark.process
def test_a_role_that_cannot_store_a_run_is_refused_before_it_starts(roles) -> None:
    """Issue 26: a role without INSERT was found only at the end of the plan (the whole run
    measured, then exit 1). Now the session is refused before the lab is even built."""
    from app.core.records import RunConfig, SutDescription
    from app.station.session import open_session
    from drivers.clock import FakeClock

    owner, _, qa = roles
    with sa.create_engine(owner).connect() as conn:
        before = conn.exec_driver_sql("SELECT count(*) FROM runs").scalar()
    config = RunConfig(method="smoke", lab="sim-direct",
                       sut=SutDescription(coms_declared=("deduplication",),
                                          coms_on_during_test=("deduplication",)))
    with pytest.raises(MissingRightsError) as refused:
        open_session(config, db_url=qa, clock=FakeClock())
    message = str(refused.value)
    assert "as role 'qa_anna'" in message and "nothing was started" in message
    assert "INSERT on power_samples" in message and "USAGE on sequence" in message
    assert "Database roles" in message
    with sa.create_engine(owner).connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM runs").scalar() == before


@pytest.mark.process
def test_the_station_role_feeds_the_lab_copy_and_the_qa_role_cannot(roles, tmp_path) -> None:
    from app.storage.record_hash import record_sha256
    from app.storage.sender import Sender, open_lab, sync

    _, station_url, qa = roles
    local = f"sqlite:///{tmp_path / 'bench.db'}"
    run_id = _store(local)
    station, lab = open_database(local), open_lab(station_url)
    try:
        assert sync(station, lab) > 0
        assert record_sha256(load_run(lab, run_id)) == record_sha256(load_run(station, run_id))
        state = Sender(station, qa, interval_s=0.1).start().stop(final_wait_s=20.0)
        assert "as role 'qa_anna': missing INSERT on stations" in state.last_error
    finally:
        station.close()
        lab.close()


def _pk(owner: str, run_id: str) -> int:
    engine = sa.create_engine(owner)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(s.Run.id).where(s.Run.uuid == run_id)).scalar_one()
    finally:
        engine.dispose()


def _victim(owner: str, run_id: str) -> tuple:
    """Everything of run ``run_id`` an attack could change: its record hash, its status and
    writer, and its rows' count and watts (read as the owner)."""
    from app.storage.record_hash import record_sha256

    database = open_database(owner)
    try:
        run = load_run(database, run_id)
        with database.read() as conn:
            row = conn.execute(sa.select(s.Run.status, s.Run.writer_role)
                               .where(s.Run.uuid == run_id)).one()
        return (record_sha256(run), tuple(row), repr(run.power.watts.tolist()),
                repr([(m.name, m.value) for m in run.metrics]), len(run.audit))
    finally:
        database.close()


@pytest.mark.process
def test_attack_2_one_station_cannot_rewrite_another_stations_run(roles) -> None:
    """Issue 39, attack 2, step by step: bench_1 (with exactly the documented grants) rewrites
    bench_2's finished run B — samples ×0.5, a metric, the status, a deleted and an added row
    — and each statement is refused by the server; nothing of B changes. Its own finished run
    is immutable to bench_2 as well."""
    owner, bench_1, _ = roles
    bench_2 = _as(owner, STATIONS[1])
    run_b = _store(bench_2)
    before = _victim(owner, run_b)
    assert before[1] == ("COMPLETED", "bench_2")  # the server recorded who stored it
    pk = _pk(owner, run_b)
    for sql in (f"UPDATE power_samples SET watts = watts * 0.5 WHERE run_id = {pk}",
                f"UPDATE metrics SET value = value * 2 WHERE run_id = {pk}",
                f"UPDATE runs SET status = 'ABORTED' WHERE id = {pk}",
                f"UPDATE runs SET writer_role = 'bench_1' WHERE id = {pk}",
                f"DELETE FROM metrics WHERE run_id = {pk}",
                f"INSERT INTO power_samples (run_id, phase_index, t, watts) "
                f"VALUES ({pk}, 2, 1.0, 1.0)",
                f"DELETE FROM runs WHERE id = {pk}"):
        _refused(bench_1, sql)
        _refused(bench_2, sql)  # finished: its own station cannot either
    # the shared rows B points to name it in every list: not renamed by a station
    _refused(bench_1, "UPDATE stations SET name = 'forged' WHERE id = (SELECT station_id "
                      f"FROM runs WHERE id = {pk})")
    _refused(bench_1, "UPDATE suts SET serial = 'other' WHERE id = (SELECT sut_id FROM runs "
                      f"WHERE id = {pk})")
    # a temporary table named like the guard's lookups (pg_temp comes first in a session's
    # search path) must not fool it: the guard reads only the schema's own tables
    _refused(bench_1, "CREATE TEMP TABLE runs (id int, uuid text, writer_role text, "
                      f"status text); INSERT INTO runs VALUES ({pk}, 'x', 'bench_1', "
                      f"'RUNNING'); UPDATE power_samples SET watts = 0 WHERE run_id = {pk}")
    _refused(bench_1, "CREATE TEMP TABLE pg_roles (rolname name, rolsuper bool); "
                      "SET search_path = pg_temp, public, pg_catalog; "
                      f"UPDATE power_samples SET watts = 0 WHERE run_id = {pk}")
    assert _victim(owner, run_b) == before


@pytest.mark.process
def test_attack_2_a_station_cannot_approve_in_qas_name(roles, capsys) -> None:
    """Issue 39, attack 2 continued: ``runs approve --by "QA Lead Jane"`` with a station login
    is refused (so is a disposition); QA's approval records the login that inserted it, which
    the client cannot set, and ``runs show`` says who inserted it."""
    owner, bench_1, qa = roles
    run_a = _store(bench_1)
    before = _victim(owner, run_a)
    approve = ["runs", "approve", run_a, "--by", "QA Lead Jane", "--statement", "figures ok",
               "--confirm", "simulated on purpose"]
    assert main(approve + ["--db", bench_1]) == 1
    err = capsys.readouterr().err
    assert "only members of storwatt_qa approve" in err and err.count("\n") == 1
    database = open_database(bench_1)
    try:
        with pytest.raises(Exception, match="only members of storwatt_qa"):
            add_audit_entry(database, run_a, "disposition", "fine", "QA Lead Jane", "accepted")
    finally:
        database.close()
    assert _victim(owner, run_a) == before
    _refused(bench_1, f"INSERT INTO audit_entries (run_id, kind, text, author, created_wall) "
                      f"VALUES ({_pk(owner, run_a)}, 'approval', 'ok', 'QA Lead Jane', 'now')")
    _refused(_as(owner, STATIONS[1]), "INSERT INTO audit_entries (run_id, kind, text, author, "
             f"created_wall) VALUES ({_pk(owner, run_a)}, 'note', 'x', 'y', 'now')")

    assert main(approve + ["--db", qa]) == 0
    capsys.readouterr()
    engine = sa.create_engine(qa)
    with engine.begin() as conn:  # a client naming another inserter is overruled
        conn.exec_driver_sql(
            "INSERT INTO audit_entries (run_id, kind, text, author, created_wall, db_role) "
            f"VALUES ({_pk(owner, run_a)}, 'note', 'hello', 'x', 'now', 'storwatt')")
    engine.dispose()
    database = open_database(owner)
    try:
        entries = audit_entries(database, run_a)
    finally:
        database.close()
    assert [(e.kind.value, e.author, e.db_role) for e in entries] == [
        ("approval", "QA Lead Jane", "qa_anna"), ("note", "x", "qa_anna")]
    assert main(["runs", "show", run_a, "--db", owner]) == 0
    shown = capsys.readouterr().out
    assert "Approval of revision 1 by QA Lead Jane: inserted by qa_anna" in shown
    assert "stored by login bench_1 (recorded by the lab server)" in shown


@pytest.mark.process
def test_the_report_says_who_inserted_the_approval(roles, tmp_path) -> None:
    """The PDF's sign-off and the xlsx's QA audit sheet name the login the server recorded."""
    import openpyxl

    from app.reports.xlsx import AUDIT_COLUMNS
    from tests.support.documents import pdf_text, sheet_rows

    owner, bench_1, qa = roles
    run_id = _store(bench_1)
    assert main(["runs", "approve", run_id, "--by", "Q. Auditor", "--statement", "ok",
                 "--confirm", "simulated on purpose", "--db", qa]) == 0
    pdf, xlsx = tmp_path / "r.pdf", tmp_path / "r.xlsx"
    assert main(["report", run_id, "--db", owner, "--pdf", str(pdf), "--xlsx", str(xlsx)]) == 0
    assert "inserted by qa_anna" in pdf_text(pdf)
    rows = sheet_rows(openpyxl.load_workbook(xlsx), "QA audit", AUDIT_COLUMNS)
    assert [(r["kind"], r["inserted_by"]) for r in rows] == [("approval", "qa_anna")]


@pytest.mark.process
def test_late_write_a_station_resumes_its_own_interrupted_run_and_no_other(roles) -> None:
    """Late write 1 (docs/security.md): INTERRUPTED is unfinished, so the login that stored
    the run resumes it in the same record; another station's login cannot claim it, and once
    the continuation finished the run is immutable to its own station too."""
    from app.storage.resumption import claim_run, stored_seq
    from tests.support.resume_runs import interrupted_run, resume

    owner, bench_1, _ = roles
    run_id = interrupted_run(bench_1, "Ready idle")
    other = open_database(_as(owner, STATIONS[1]))
    try:
        with pytest.raises(Exception, match="stored by role bench_1, not bench_2"):
            claim_run(other, run_id, stored_seq(other, run_id))
    finally:
        other.close()
    _, run = resume(bench_1, run_id)
    assert run.status.value == "COMPLETED"
    pk = _pk(owner, run_id)
    _refused(bench_1, f"UPDATE power_samples SET watts = 0 WHERE run_id = {pk}")
    _refused(bench_1, f"UPDATE runs SET status = 'INTERRUPTED' WHERE id = {pk}")


@pytest.mark.process
def test_late_write_the_sender_catches_up_a_run_it_sent_in_parts(roles, tmp_path) -> None:
    """Late write 2: the lab sender (a station login) sends a run while it goes on, replacing
    its changing rows (DELETE on six tables), and its final rows and status after it ended;
    the lab copy then equals the station's and a further sync sends nothing."""
    from app.storage.record_hash import record_sha256
    from app.storage.sender import open_lab, sync

    _, bench_1, _ = roles
    local = open_database(f"sqlite:///{tmp_path / 'bench.db'}")
    lab = open_lab(bench_1)
    writer = RunWriter(local)
    events = list(full_run(samples_per_phase=5))
    try:
        for event in events[: len(events) // 2]:
            writer(event)
        writer.flush()
        assert sync(local, lab) > 0  # the lab copy is RUNNING, part of the rows
        for event in events[len(events) // 2:]:
            writer(event)
        assert writer.close().in_database
        assert sync(local, lab) > 0  # replaced rows, the rest, then the final status
        run_id = events[0].run_id
        assert load_run(lab, run_id).status.value == "COMPLETED"
        assert record_sha256(load_run(lab, run_id)) == record_sha256(load_run(local, run_id))
        assert sync(local, lab) == 0
    finally:
        local.close()
        lab.close()


@pytest.mark.process
def test_an_older_lab_schema_names_who_must_upgrade_it(roles, capsys) -> None:
    """Issue 39, item 5: a newer StorWatt on a station reaches a lab schema one revision older.
    A station login may not upgrade it; instead of PostgreSQL's "must be owner of table …"
    half-way through, one line names the owner who must run ``storwatt db upgrade``."""
    from app.storage import migrate
    from app.storage.errors import SchemaOwnerError

    owner, bench_1, _ = roles
    engine = sa.create_engine(owner)
    older = f"{int(migrate.head()) - 1:04d}"
    try:
        with engine.begin() as conn:
            conn.execute(migrate.VERSION_TABLE.update().values(version_num=older))
        with pytest.raises(SchemaOwnerError):
            open_database(bench_1)
        assert main(["runs", "list", "--db", bench_1]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "must be owner" not in err
        assert (f"has schema revision {older} and this StorWatt needs {migrate.head()}: role "
                f"'bench_1' may not upgrade it; the schema's owner (storwatt) must run: "
                "storwatt db upgrade") in err
    finally:
        with engine.begin() as conn:
            conn.execute(migrate.VERSION_TABLE.update().values(version_num=migrate.head()))
        engine.dispose()


@pytest.mark.process
def test_an_existing_lab_database_is_upgraded_by_its_owner(roles, capsys) -> None:
    """The upgrade path: a lab database at revision 0021 with a finished and an unfinished run
    (stored before any login was recorded) is upgraded by the owner (``storwatt db upgrade``);
    the finished run is then immutable to every station, and the unfinished one is changed by
    a station only once the owner has assigned it (docs/storage.md, "Database roles")."""
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    from app.storage import migrate

    owner, bench_1, _ = roles
    admin = sa.create_engine(owner, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql("DROP DATABASE IF EXISTS lab_0021")
        conn.exec_driver_sql("CREATE DATABASE lab_0021")
    admin.dispose()
    old_owner, old_bench = (sa.engine.make_url(u).set(database="lab_0021")
                            .render_as_string(hide_password=False) for u in (owner, bench_1))
    engine = sa.create_engine(old_owner)
    with engine.begin() as conn:  # the schema as StorWatt left it at 0021, two runs in it
        with Operations.context(MigrationContext.configure(conn)):
            for rev in migrate.revisions()[:-1]:
                rev.module.upgrade()
        migrate.VERSION_TABLE.create(conn)
        conn.execute(migrate.VERSION_TABLE.insert().values(version_num="0021"))
        for uuid, status in (("legacy-done", "COMPLETED"), ("legacy-open", "INTERRUPTED")):
            pk = conn.execute(sa.insert(s.Run).values(
                uuid=uuid, config={}, method_name="demo", method_version="1",
                method_compliant=False, taxonomy="online-2", lab="sim", operator="x",
                status=status, started_wall="2026-01-01T00:00:00+00:00", t0=0.0,
                planned_s=1.0).returning(s.Run.id)).scalar_one()
            conn.execute(sa.insert(s.PowerSampleRow).values(run_id=pk, phase_index=0, t=0.5,
                                                            watts=100.0))
    assert main(["db", "upgrade", "--db", old_owner]) == 0
    assert f"version {migrate.head()}" in capsys.readouterr().out
    assert main(["db", "roles", "--station", STATIONS[0], "--db", old_owner]) == 0
    _refused(old_bench, "UPDATE power_samples SET watts = 1")  # neither run is bench_1's
    _refused(old_bench, "UPDATE runs SET status = 'RUNNING' WHERE uuid = 'legacy-open'")
    with engine.begin() as conn:  # the owner gives the unfinished run to its station
        conn.exec_driver_sql("UPDATE runs SET writer_role = 'bench_1' "
                             "WHERE uuid = 'legacy-open'")
    station = sa.create_engine(old_bench)
    with station.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET status = 'RUNNING' WHERE uuid = 'legacy-open'")
    station.dispose()
    _refused(old_bench, "UPDATE power_samples SET watts = 1 WHERE run_id = "
                        "(SELECT id FROM runs WHERE uuid = 'legacy-done')")
    engine.dispose()
