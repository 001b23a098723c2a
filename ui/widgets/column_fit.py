"""A list's columns share its width instead of scrolling sideways.

Sized to their contents, a long SUT name or method relation pushes the columns QA reads last
off a 1366 px laptop screen (issue 41). When the contents are wider than the view, the widest
columns give way first — each is capped at one common width, the narrow ones keep theirs — and
the text Qt elides shows whole in the cell's tooltip. Re-done whenever the view is resized.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QTableView

#: a column is never squeezed below this (a few characters and the ellipsis)
NARROWEST_PX = 60


def capped_widths(natural: Sequence[int], room: int, narrowest: int = NARROWEST_PX) -> list[int]:
    """``natural`` widths capped at the one width that makes them fit ``room`` (water-filling:
    the widest give way first); as they are when they fit; never below ``narrowest``."""
    if sum(natural) <= room or not natural:
        return list(natural)
    ordered = sorted(natural)
    left, count = room, len(ordered)
    cap = narrowest
    for i, width in enumerate(ordered):
        share = left // (count - i)  # what each remaining column would get
        if width > share:
            cap = max(share, narrowest)
            break
        left -= width
    return [min(width, cap) for width in natural]


class FitColumnsToWidth(QObject):
    """Keeps ``table``'s visible columns within its viewport (installed on the viewport).

    The contents are measured only when asked (:meth:`fit`: the list loaded, a column shown);
    a resize only re-caps the widths measured then, so resizing never reads rows again."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        self.natural: dict[int, int] = {}
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.horizontalHeader().setStretchLastSection(True)  # no empty strip at the right
        table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize and self.natural:
            self._cap()
        return False

    def fit(self) -> None:
        """Measure the contents, then cap them to the viewport's width."""
        header = self.table.horizontalHeader()
        self.table.resizeColumnsToContents()
        self.natural = {c: header.sectionSize(c) for c in range(header.count())}
        self._cap()

    def _cap(self) -> None:
        header = self.table.horizontalHeader()
        shown = [c for c in self.natural if not header.isSectionHidden(c)]
        widths = capped_widths([self.natural[c] for c in shown], self.table.viewport().width())
        for column, width in zip(shown, widths):
            header.resizeSection(column, width)
