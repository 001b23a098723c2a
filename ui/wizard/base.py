"""Shared behaviour of the wizard pages: copy widgets ⇄ :class:`RunEntries`, and block
*Next* with a visible message naming what to fix (the rule itself lives in ``model``)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QLabel, QWidget, QWizardPage

from app.station.run_entries import EntryError, RunEntries


class EntryPage(QWizardPage):
    def __init__(self, title: str, subtitle: str) -> None:
        super().__init__()
        self.setTitle(title)
        self.setSubTitle(subtitle)
        self.error = QLabel("")
        self.error.setObjectName("entryError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c03030; font-weight: bold;")
        self.error.hide()
        #: an entry in conflict with another page's, said beside the entry while it lasts;
        #: on the page that blocks, *Next* stays disabled until one of the two is corrected
        #: (each page places it)
        self.conflict = QLabel("")
        self.conflict.setObjectName("entryConflict")
        self.conflict.setWordWrap(True)
        self.conflict.setStyleSheet("color: #c03030; font-weight: bold;")
        self.conflict.hide()
        self._conflict_blocks = False
        #: entry field name → widget to focus when that entry is rejected
        self.widgets: dict[str, QWidget] = {}

    # subclasses: copy their widgets into the entries / from the entries
    def collect(self, e: RunEntries) -> RunEntries:
        return e

    def load(self, e: RunEntries) -> None:
        """Fill the widgets (resume); never called by navigation, so Back keeps entries."""

    def check(self, e: RunEntries) -> None:
        """Raise :class:`EntryError` when this page's entries cannot be accepted."""

    def entries(self) -> RunEntries:
        return self.wizard().entries()  # type: ignore[attr-defined]  # a NewRunWizard

    def show_error(self, message: str, field: str = "") -> None:
        self.error.setText(message)
        self.error.show()
        widget = self.widgets.get(field)
        if widget is not None:
            widget.setFocus()

    def clear_error(self) -> None:
        self.error.clear()
        self.error.hide()

    def set_conflict(self, message: str, blocks: bool = True) -> None:
        """Show ``message`` beside the entry ("" clears it); ``blocks``: *Next* is disabled
        while it is shown."""
        if message == self.conflict.text() and blocks == self._conflict_blocks:
            return
        self.conflict.setText(message)
        self.conflict.setVisible(bool(message))
        self._conflict_blocks = blocks
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802 (Qt naming)
        blocked = self._conflict_blocks and bool(self.conflict.text())
        return not blocked and super().isComplete()

    def validatePage(self) -> bool:  # noqa: N802 (Qt naming)
        try:
            self.check(self.entries())
        except EntryError as exc:
            self.show_error(exc.message, exc.field)
            return False
        self.clear_error()
        return True


def with_changes(e: RunEntries, **changes) -> RunEntries:
    return replace(e, **changes)
