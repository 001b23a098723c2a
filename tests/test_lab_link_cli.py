"""Truthful lab-link commands (issue 39 items 3 and 4): ``db status`` names the database it talks
about and reads the last outcome of any sync; ``station lab-db`` checks a URL before keeping it;
no command creates a database it was asked only to read or copy from.

The lab database here is a SQLite file at an absolute path (the sender and the checks treat it
as they treat PostgreSQL, minus roles); the PostgreSQL cases are in test_storage_sender.py."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.station_settings import lab_database
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter


def _station_with_a_run(tmp_path: Path) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path / 'station.db'}"
    database = open_database(url)
    writer = RunWriter(database)
    events = list(full_run(samples_per_phase=3))
    for event in events:
        writer(event)
    writer.close()
    database.close()
    return url, events[0].run_id


def _empty_lab(path: Path) -> str:
    url = f"sqlite:///{path}"
    open_database(url, recover_journals=False, interrupt_orphans=False).close()  # as its owner
    return url


def _status(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["db", "status", *argv])
    return code, capsys.readouterr().out


# --- db status: the configured database, the last outcome of any sync -------------------------

def test_db_status_is_right_before_during_and_after_the_first_sync(tmp_path, capsys) -> None:
    station, run_id = _station_with_a_run(tmp_path)
    lab = _empty_lab(tmp_path / "lab.db")
    db = ["--db", station]
    assert main(["station", "lab-db", lab]) == 0
    code, out = _status(capsys, *db)  # before: configured, never synced, the run not there
    assert code == 0
    assert f"lab database   {lab} (named by storwatt station lab-db" in out
    assert "none configured" not in out and "none recorded to this database" in out
    assert f"run {run_id[:8]}" in out and "not in the lab copy" in out
    assert main(["db", "sync", *db]) == 0
    code, out = _status(capsys, *db)  # after: db sync's own success is the last outcome
    assert code == 0 and "last success   20" in out and "never" not in out
    assert "by storwatt db sync" in out and "holds every run of this station" in out
    data = json.loads(_status(capsys, *db, "--json")[1])
    assert data["lab"] == lab and data["by"] == "storwatt db sync" and data["last_success"]
    assert data["station_db"] == station and data["runs_behind"] == []


def test_a_failed_db_sync_is_recorded_and_shown(tmp_path, capsys) -> None:
    station, _ = _station_with_a_run(tmp_path)
    lab = _empty_lab(tmp_path / "lab.db")
    assert main(["station", "lab-db", lab]) == 0
    (tmp_path / "lab.db").write_bytes(b"not a database at all, " * 200)  # the lab breaks
    assert main(["db", "sync", "--db", station]) == 1
    code, out = _status(capsys, "--db", station)
    assert code == 1
    assert "last error     cannot reach the lab database" in out
    assert "by storwatt db sync" in out


def test_db_status_about_another_lab_does_not_show_the_previous_labs_state(
        tmp_path, capsys) -> None:
    station, _ = _station_with_a_run(tmp_path)
    first = _empty_lab(tmp_path / "first.db")
    other = _empty_lab(tmp_path / "other.db")
    assert main(["station", "lab-db", first]) == 0
    assert main(["db", "sync", "--db", station]) == 0
    code, out = _status(capsys, "--db", station, "--lab-db", other)
    assert code == 0
    assert first not in out  # nothing about the previous lab above the answer about OTHER
    assert f"lab database   {other} (named by --lab-db)" in out
    assert "none recorded to this database" in out and "not in the lab copy" in out


def test_db_status_during_the_first_sync_shows_the_part_sent(tmp_path, capsys,
                                                            monkeypatch) -> None:
    from app.storage import sender
    from app.storage.repository import load_run

    station, run_id = _station_with_a_run(tmp_path)
    lab = _empty_lab(tmp_path / "lab.db")
    assert main(["station", "lab-db", lab]) == 0
    monkeypatch.setattr(sender, "BATCH_ROWS", 5)  # a first push that cannot send it all
    ours, theirs = sender.open_lab(station), sender.open_lab(lab)
    try:
        assert sender.push_run(ours, theirs, run_id).more
        assert load_run(theirs, run_id).status.value == "RUNNING"  # a prefix, not claimed
    finally:
        ours.close()
        theirs.close()
    code, out = _status(capsys, "--db", station)
    assert code == 0 and "none recorded to this database" in out
    assert f"run {run_id[:8]}" in out and "events behind" in out
    assert "not in the lab copy" not in out  # it is there, in part


def test_the_start_pages_lab_health_shows_only_its_own_databases_state(tmp_path,
                                                                       monkeypatch) -> None:
    from app.storage.sender import SenderState, save_state
    from ui.shell.health import HealthItem, station_health

    # the fio line without starting fio for it (the lab line is under test here)
    monkeypatch.setattr("ui.shell.health.fio_item",
                        lambda: HealthItem("fio", True, "fio-3.33 at /usr/bin/fio"))

    first, other = (_empty_lab(tmp_path / n) for n in ("first.db", "other.db"))
    save_state(SenderState(first, "2026-12-01T10:00:00Z", "", 0, "storwatt db sync"))
    assert main(["station", "lab-db", other]) == 0
    lab_item = next(i for i in station_health("sqlite://") if i.name == "Lab database")
    assert "last success never" in lab_item.detail and "2026-12-01" not in lab_item.detail


# --- station lab-db: checked before it is kept ------------------------------------------------

@pytest.mark.parametrize("url, says", [
    ("not a url", "is not a database URL"),
    ("sqlite:///relative/lab.db", "is a relative path"),
    ("postgresql+psycopg://storwatt_station@no-such-host.invalid/storwatt",
     "cannot open database"),
])
def test_station_lab_db_refuses_an_address_that_cannot_work(url, says, tmp_path, capsys,
                                                            monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main(["station", "lab-db", url]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err and "unchanged" in err
    assert lab_database() == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing created


def test_station_lab_db_refuses_a_missing_file_and_an_old_schema(tmp_path, capsys) -> None:
    missing = tmp_path / "typo.db"
    assert main(["station", "lab-db", f"sqlite:///{missing}"]) == 1
    assert "no database at" in capsys.readouterr().err and not missing.exists()
    old = tmp_path / "old.db"
    import sqlite3

    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        conn.execute("INSERT INTO alembic_version VALUES ('0015')")
    assert main(["station", "lab-db", f"sqlite:///{old}"]) == 1
    err = capsys.readouterr().err
    assert "schema 0015" in err and "owner" in err and "storwatt db upgrade --db" in err
    assert lab_database() == ""


def test_station_lab_db_offline_keeps_it_unchecked_and_says_so(capsys) -> None:
    url = "postgresql+psycopg://storwatt_station@no-such-host.invalid/storwatt"
    assert main(["station", "lab-db", url, "--offline"]) == 0
    assert "UNCHECKED" in capsys.readouterr().out and lab_database() == url


def test_station_lab_db_accepts_a_current_lab_database(tmp_path, capsys) -> None:
    lab = _empty_lab(tmp_path / "lab.db")
    assert main(["station", "lab-db", lab]) == 0
    assert "checked" in capsys.readouterr().out and lab_database() == lab


# --- read-only commands never create a database ------------------------------------------------

#: every command that reads a database, or adds to a run already in one, with a mistyped --db
READERS = [
    ["runs", "list", "--db", "{typo}"],
    ["runs", "show", "abc", "--db", "{typo}"],
    ["runs", "savings", "abc", "def", "--db", "{typo}"],
    ["runs", "com", "abc", "--com", "parity-raid", "--result", "passed", "--evidence", "x",
     "--by", "T", "--db", "{typo}"],
    ["runs", "approve", "abc", "--by", "Q", "--statement", "s", "--db", "{typo}"],
    ["report", "abc", "--pdf", "{out}", "--db", "{typo}"],
    ["db", "info", "--db", "{typo}"],
    ["db", "copy", "--from", "{typo}", "--to", "{dest}"],
    ["db", "sync", "--db", "{typo}", "--lab-db", "{lab}"],
    ["db", "status", "--db", "{typo}", "--lab-db", "{lab}"],
    ["audit", "list", "abc", "--db", "{typo}"],
    ["audit", "add", "abc", "--note", "n", "--author", "Q", "--db", "{typo}"],
    ["family", "list", "--db", "{typo}"],
    ["family", "sweet-spot", "--vendor", "V", "--model", "M", "--db", "{typo}"],
]


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a[:2]))
def test_a_mistyped_database_path_is_refused_and_nothing_is_created(argv, tmp_path,
                                                                    capsys) -> None:
    typo = tmp_path / "statoin.db"
    lab = _empty_lab(tmp_path / "lab.db")
    values = {"typo": f"sqlite:///{typo}", "out": str(tmp_path / "r.pdf"), "lab": lab,
              "dest": f"sqlite:///{tmp_path / 'dest.db'}"}
    before = sorted(p.name for p in tmp_path.iterdir())
    capsys.readouterr()
    try:
        code = main([a.format(**values) for a in argv])
    except SystemExit as exc:  # argparse: a sub-command's options changed under this test
        pytest.fail(f"{argv}: argparse refused it ({exc})")
    said = capsys.readouterr()
    assert code == 1 and f"no database at {typo}" in said.err + said.out
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even the destination


#: commands that may make a database: the run records into one, upgrade and copy's
#: destination create one on purpose, recover imports a journal into the database it names
CREATORS = {("cmd_run.py", "_resumed_session"), ("cmd_run.py", "_confirm_range_plan"),
            ("cmd_db.py", "copy_command"), ("cmd_db.py", "recover_command")}


def test_every_cli_database_opening_is_a_guarded_one_or_a_known_creator() -> None:
    """The class, not the case: a new command that calls ``open_database`` on a path it was
    only given to read would create a file behind a typo; it must use ``open_for_reading`` or
    ``open_existing_database`` (app/storage/opening.py), or be listed above with its reason."""
    found = set()
    for path in sorted((Path(__file__).parent.parent / "app" / "cli").glob("cmd_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for node in ast.walk(func):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "open_database"):
                    found.add((path.name, func.name))
    assert found <= CREATORS, f"unguarded openings: {sorted(found - CREATORS)}"


def test_an_older_lab_schema_the_station_cannot_upgrade_says_who_runs_the_upgrade(
        tmp_path, capsys) -> None:
    """Issue 39: PostgreSQL's raw "must be owner of table phases" reached the technician; a
    lab schema the station's role cannot upgrade now names the owner's command (here a stand-in
    for an old schema whose upgrade fails)."""
    import sqlite3

    station, _ = _station_with_a_run(tmp_path)
    old = tmp_path / "old-lab.db"
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        conn.execute("INSERT INTO alembic_version VALUES ('0015')")
    assert main(["db", "sync", "--db", station, "--lab-db", f"sqlite:///{old}"]) == 1
    err = capsys.readouterr().err
    assert "schema 0015" in err and "owner" in err and "storwatt db upgrade --db" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.process
def test_station_lab_db_on_postgresql_checks_schema_and_rights(capsys) -> None:
    """On a real server: a role that may only read is refused naming the missing rights, an
    empty database names the owner's upgrade, the owner's URL is accepted as checked."""
    import sqlalchemy as sa

    from tests.support import pg_server

    if pg_server.available():
        pytest.skip(pg_server.available())
    with pg_server.postgres_server() as owner:
        open_database(owner).close()  # the owner creates the schema
        engine = sa.create_engine(owner, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            for sql in ("CREATE ROLE reader LOGIN",
                        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
                        "CREATE DATABASE blank"):
                conn.exec_driver_sql(sql)
        engine.dispose()
        reader = owner.replace("//storwatt@", "//reader@")
        assert main(["station", "lab-db", reader]) == 1
        err = capsys.readouterr().err
        assert "role 'reader' cannot store a run (missing INSERT on stations" in err
        assert len(err.strip().splitlines()) == 1 and lab_database() == ""
        blank = owner.rsplit("/", 1)[0] + "/blank"
        assert main(["station", "lab-db", blank]) == 1
        assert "holds no StorWatt schema: the database's owner" in capsys.readouterr().err
        assert main(["station", "lab-db", owner]) == 0
        assert "checked: schema current, role 'storwatt' may store runs" in \
            capsys.readouterr().out
        assert lab_database() == owner
