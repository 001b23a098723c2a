"""The finished run's reports from the File menu (issue 41, seen 5): Export PDF… (Ctrl+S),
Export xlsx… (Ctrl+Shift+S) and Export bundle… write what the run view's buttons write, and
are offered only while the run view offers a finished run; a second Start is answered in a
dialog, not only in the status bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from app.storage.repository import load_run
from tests.support.recorded_runs import record_smoke_run
from ui.shell.health import HealthItem
from ui.shell.main_window import MainWindow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('menu') / 'runs.db'}"
    run_id, _events = record_smoke_run(url)
    return url, run_id


@pytest.fixture()
def window(qtbot, tmp_path: Path, recorded, monkeypatch) -> MainWindow:
    monkeypatch.setattr("ui.shell.health.fio_item",
                        lambda: HealthItem("fio", True, "fio-3.33 at /usr/bin/fio"))
    station = MainWindow(lab="sim-direct", db_url=recorded[0], default_method="smoke",
                         settings=QSettings(str(tmp_path / "ui.ini"),
                                            QSettings.Format.IniFormat))
    qtbot.addWidget(station)
    return station


def test_the_file_menu_exports_the_finished_runs_reports(window: MainWindow, recorded,
                                                         tmp_path: Path) -> None:
    pdf, xlsx, bundle = window.export_actions
    assert pdf.shortcut() == QKeySequence(QKeySequence.StandardKey.Save)
    assert xlsx.shortcut().toString() in ("Ctrl+Shift+S",
                                          QKeySequence(QKeySequence.StandardKey.SaveAs)
                                          .toString())
    export = window.run_view.export
    export.set_run(None)  # a run going on: nothing to export
    assert not any(a.isEnabled() for a in window.export_actions)
    url, run_id = recorded
    export.set_run(lambda: load_run(window.database, run_id))
    assert all(a.isEnabled() for a in window.export_actions)
    asked = iter([str(tmp_path / "r.pdf"), str(tmp_path / "r.xlsx"), str(tmp_path / "r.zip")])
    export.ask = lambda *_args, **_kw: (next(asked), "")
    for action in window.export_actions:
        action.trigger()
    assert [p.name for p in sorted(tmp_path.glob("r.*"))] == ["r.pdf", "r.xlsx", "r.zip"]
    assert (tmp_path / "r.pdf").read_bytes().startswith(b"%PDF")


def test_a_second_start_is_answered_in_a_dialog(window: MainWindow, monkeypatch) -> None:
    with monkeypatch.context() as patch:  # undone before the window closes (no run to abort)
        patch.setattr(type(window.run_view), "running", property(lambda _self: True))
        assert window.new_run() is None
    box = window.error_box
    assert box.isVisible() and box.icon() == QMessageBox.Icon.Information
    assert "A run is in progress" in box.text()
    box.close()


def test_the_status_bar_says_paused_while_the_header_does(window: MainWindow) -> None:
    """Issue 41, seen 5: the status bar said "running" through a pause."""
    from types import SimpleNamespace

    window.run_view.session = SimpleNamespace(run_id="abcdef1234567890")
    window.run_view.controls_changed.emit(True, True)
    assert window.statusBar().currentMessage().startswith("Run abcdef12 PAUSED")
    window.run_view.controls_changed.emit(True, False)
    assert window.statusBar().currentMessage().startswith("Run abcdef12 running")
    window.run_view.session = None
