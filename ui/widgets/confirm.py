"""Yes/no questions the station asks before something hard to undo (start a long run, abort,
quit mid-run). Widgets take a :data:`Confirm` callable so tests can answer without a dialog."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

Confirm = Callable[[QWidget, str, str], bool]


def ask_yes_no(parent: QWidget, title: str, text: str) -> bool:
    """Modal yes/no question; 'No' is the default so Enter never aborts or starts a run by
    accident."""
    answer = QMessageBox.question(parent, title, text,
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
