"""The run view's event log: a read-only text that keeps following new lines while the
technician has not scrolled away from its end.

Qt's own rule (``QPlainTextEdit.appendPlainText``) scrolls only when the view is at the
scroll bar's maximum *just before* a line is appended. A layout change moves that maximum
without moving the view — the window restored from maximized, the header growing a row, the
splitter dragged — and from then on the log stayed where it was while lines arrived below
(issue 28, reproduced on Xvfb at 1920×1080). Here following is a state: it ends when the
technician scrolls up and starts again when they scroll back to the end, whatever the layout
does in between.
"""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QWidget


class EventLog(QPlainTextEdit):
    def __init__(self, max_lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(max_lines)
        self.setAccessibleName("Event log")
        self.setPlaceholderText("Event log")
        #: the view is kept at the last line (until the technician scrolls away from it)
        self.following = True
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._value_changed)

    def append_line(self, line: str) -> None:
        self.appendPlainText(line)
        if self.following:
            self._to_end()

    def clear(self) -> None:
        super().clear()
        self.following = True

    def _to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _range_changed(self, _minimum: int, _maximum: int) -> None:
        """A layout change or a new line moved the end: stay on it while following."""
        if self.following:
            self._to_end()

    def _value_changed(self, value: int) -> None:
        """A scroll by the technician (wheel, keys, the bar): following while at the end."""
        self.following = value >= self.verticalScrollBar().maximum()
