"""Check the Qt binding before the station relies on it.

PySide6 6.12.0 (with CPython 3.11) drops one reference to ``True`` on *every* signal emission,
connected or not; pyqtgraph emits several signals per repaint, so the interpreter aborts with
"bool_dealloc: deallocating True or False" after some thousands of repaints — minutes into a
run. The check costs a few microseconds and turns that crash into an actionable message.
"""

from __future__ import annotations

import sys

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import QObject, Signal

_PROBE_EMITS = 64


class QtRuntimeError(RuntimeError):
    """The installed Qt binding is unusable for a long-running station."""


class _Probe(QObject):
    ping = Signal()


def signal_emit_leaks() -> int:
    """References to ``True`` lost over a burst of signal emissions (0 on a sound binding)."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(_PROBE_EMITS):
        probe.ping.emit()
    lost = before - sys.getrefcount(True)
    return max(0, lost)


def check_qt_runtime() -> None:
    lost = signal_emit_leaks()
    if lost >= _PROBE_EMITS // 2:
        raise QtRuntimeError(
            f"PySide6 {PYSIDE_VERSION} loses a reference to True on every signal emission; the "
            "station would crash within minutes. Install a sound version: "
            "pip install 'PySide6-Essentials>=6.6,<6.12'")
