"""Record COM result (issue 28): OK with an empty author closed the dialog and threw the typed
evidence away, and the result was pre-set to "passed"."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog

from app.rules.com_verdict import ComState, ComVerdict
from ui.history.signoff_dialogs import ComResultDialog

THIN = ComVerdict("thin-provisioning", "Thin provisioning", True, False, ComState.NOT_VERIFIED,
                  "no station check", None, None)


def test_ok_keeps_an_incomplete_entry_open_and_nothing_is_pre_set(qtbot) -> None:
    dialog = ComResultDialog((THIN,))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.outcome.currentIndex() == -1  # the result is chosen, never defaulted
    dialog.text.setPlainText("array GUI: pool TP1 thin, disabled for the test")
    dialog.accept()  # OK with no author and no result
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == "Enter the result, your name to record the result."
    assert dialog.text.toPlainText().startswith("array GUI")  # nothing thrown away
    dialog.outcome.setCurrentIndex(dialog.outcome.findData("passed"))
    dialog.author.setText("T. Tech")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.values() == ("thin-provisioning", "passed",
                               "array GUI: pool TP1 thin, disabled for the test", "T. Tech")
