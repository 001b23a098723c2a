"""Bad databases in the history: unreachable, wrong credentials, newer schema, corrupt file —
a clear message, and the view stays usable on the local database, read-only."""

from __future__ import annotations

import sqlite3

import pytest

from tests.support import pg_server
from app.cli.main import main
from app.storage import migrate
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from ui.history.view import HistoryView


@pytest.fixture()
def local_run(tmp_path, monkeypatch) -> str:
    """A run in this station's own database (the fallback)."""
    url = f"sqlite:///{tmp_path / 'station.db'}"
    monkeypatch.setenv("STORWATT_DB", url)
    database = open_database(url)
    writer = RunWriter(database)
    events = list(full_run())
    for e in events:
        writer(e)
    writer.close()
    database.close()
    return events[0].run_id


def _fallback_view(qtbot, url: str) -> HistoryView:
    view = HistoryView(url=url)
    qtbot.addWidget(view)
    return view


def test_unreachable_server_falls_back_to_local_read_only(qtbot, local_run) -> None:
    port = pg_server._free_port()  # nothing listens there
    view = _fallback_view(qtbot, f"postgresql+psycopg://qa:s3cret@127.0.0.1:{port}/lab")
    problem = view.problem.text()
    assert view.problem.isVisibleTo(view) and "cannot open database" in problem
    assert "s3cret" not in problem and "***" in problem  # the password is never shown
    assert "read-only" in problem and view.source.read_only
    assert view.model.visible_run_ids() == [local_run]  # still browsable
    detail = view.open_detail(local_run)
    assert not detail.accept_button.isEnabled() and "Read-only" in detail.audit_state.text()
    with pytest.raises(Exception, match="read-only"):
        detail.add_entry("note", "x", "qa")


@pytest.mark.realtime("a real PostgreSQL server refusing the credentials")
@pytest.mark.process
@pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available() or "ok")
def test_wrong_credentials_are_named(qtbot, local_run) -> None:
    with pg_server.postgres_server() as url:
        wrong = url.replace("storwatt@", "intruder:pw@")
        view = _fallback_view(qtbot, wrong)
        assert 'role "intruder" does not exist' in view.problem.text()
        assert view.source.read_only and view.model.visible_run_ids() == [local_run]


def test_newer_schema_is_refused_with_versions(qtbot, tmp_path, local_run) -> None:
    path = tmp_path / "newer.db"
    url = f"sqlite:///{path}"
    open_database(url).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")
    view = _fallback_view(qtbot, url)
    assert "schema version 0099" in view.problem.text()
    assert f"supports up to version {migrate.head()}" in view.problem.text()
    assert view.source.read_only


def test_corrupt_file_is_named_and_view_stays_usable(qtbot, tmp_path, local_run) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database" * 200)
    view = _fallback_view(qtbot, f"sqlite:///{path}")
    assert "not a readable StorWatt database" in view.problem.text()
    assert path.read_bytes().startswith(b"this is not")  # the damaged file is left alone
    view.search.setText("zzz")
    assert view.model.rowCount() == 0
    view.search.setText("")
    assert view.model.rowCount() == 1


def test_no_local_database_either(qtbot, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STORWATT_DB", f"sqlite:///{tmp_path / 'absent.db'}")
    view = _fallback_view(qtbot, f"sqlite:///{tmp_path / 'missing-folder' / 'x.db'}")
    assert "no local database either" in view.problem.text()
    assert not (tmp_path / "absent.db").exists()  # nothing was created to show nothing
    assert view.model.rowCount() == 0


def test_audit_cli_add_and_list(local_run, capsys) -> None:
    assert main(["audit", "add", local_run[:8], "--note", "fan noise at 2 h",
                 "--author", "ana"]) == 0
    assert main(["audit", "add", local_run[:8], "--accept", "--author", "ana"]) == 2
    assert "--reason" in capsys.readouterr().err
    assert main(["audit", "add", local_run[:8], "--reject", "--reason", "EP_RI invalid",
                 "--author", "ben"]) == 0
    capsys.readouterr()
    assert main(["audit", "list", local_run[:8]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "note by ana: fan noise at 2 h" in out[0]
    assert "REJECTED by ben: EP_RI invalid" in out[1]
    assert main(["audit", "list", "ffffffff"]) == 1
    assert "no stored run" in capsys.readouterr().err
