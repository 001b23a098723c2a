"""The lab laptops' screens for GUI layout tests, and the check that no control is cut off.

The offscreen platform has one 800×800 screen unless told otherwise; ``tests/conftest.py``
gives it the two screens of ``tests/fixtures/laptop-screens.json`` (1366×768 and 1280×720
side by side), so a window's size is checked against a real available geometry — the same
numbers Xvfb would report — without a display server per test.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox,
                               QApplication, QComboBox, QLineEdit, QPlainTextEdit,
                               QAbstractScrollArea, QTabBar, QTextEdit, QWidget)

import pytest

#: what a technician clicks or types into
CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QTabBar,
            QAbstractItemView, QPlainTextEdit, QTextEdit)
LAPTOPS = ("1366x768", "1280x720")


def laptop_screen(size: str) -> QScreen:
    """The screen of that size (``tests/fixtures/laptop-screens.json``)."""
    for screen in QGuiApplication.screens():
        g = screen.availableGeometry()
        if f"{g.width()}x{g.height()}" == size:
            return screen
    pytest.skip(f"no {size} screen on this platform (run with QT_QPA_PLATFORM=offscreen)")


def place_on(window: QWidget, screen: QScreen) -> None:
    """Open ``window`` on ``screen`` (top-left of its available area) before it is sized."""
    window.setScreen(screen)
    window.move(screen.availableGeometry().topLeft())


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def _in_scroll_area(widget: QWidget, window: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QAbstractScrollArea):  # a scroll area, a table's cells
            return True
        parent = parent.parentWidget()
    return False


def cut_off(window: QWidget) -> list[str]:
    """Every visible control of ``window`` that is not wholly inside it and inside each of its
    parents (a button pushed past the window's edge or under a splitter), and the window
    itself when its frame leaves its screen's available area. Controls inside a scroll
    area (a table's cells included) are reachable by scrolling and not counted."""
    settle()
    problems = []
    room = window.screen().availableGeometry()
    if not room.contains(window.frameGeometry()):
        problems.append(f"window {window.frameGeometry()} outside the screen's {room}")
    for control in window.findChildren(QWidget):
        if not isinstance(control, CONTROLS) or not control.isVisibleTo(window):
            continue
        if _in_scroll_area(control, window):
            continue  # reachable by scrolling; a table's headers and cells go with the table
        rect = QRect(control.mapTo(window, QPoint(0, 0)), control.size())
        shown = rect.intersected(window.rect())
        parent = control.parentWidget()
        while parent is not None and parent is not window:
            shown = shown.intersected(QRect(parent.mapTo(window, QPoint(0, 0)), parent.size()))
            parent = parent.parentWidget()
        if shown != rect or rect.isEmpty():
            name = (getattr(control, "text", lambda: "")() or control.accessibleName()
                    or type(control).__name__)
            problems.append(f"{name!r} at {rect}, visible part {shown}")
    return problems
