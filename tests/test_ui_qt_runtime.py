"""The Qt binding the station runs on must not corrupt the interpreter (see
ui/shell/qt_runtime.py)."""

from __future__ import annotations

import sys

import pytest

from ui.shell.qt_runtime import QtRuntimeError, _Probe, check_qt_runtime, signal_emit_leaks


def test_installed_pyside_emits_signals_without_losing_references() -> None:
    assert signal_emit_leaks() == 0, "pin PySide6-Essentials<6.12 (refcount bug in 6.12.0)"
    check_qt_runtime()


def test_the_check_reports_a_leaking_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ui.shell.qt_runtime.signal_emit_leaks", lambda: 64)
    with pytest.raises(QtRuntimeError, match="<6.12"):
        check_qt_runtime()


def test_the_probe_measures_real_emissions() -> None:
    probe = _Probe()
    got = []
    probe.ping.connect(lambda: got.append(sys.getrefcount(True)))
    probe.ping.emit()
    assert len(got) == 1
