"""Windows and layouts that fit a lab laptop's screen (1366×768, 1280×720).

Why a module: the station's windows used to open at a fixed 1500×950 and grew with their
widest label, so on a laptop Abort… lay off-screen — a safety problem, not a cosmetic one.
Every top-level window is sized here against the *available* geometry of its screen (the
desktop minus panels), long texts get wrapping rows of their own, and splitters keep the
sizes the technician gave them.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QLabel, QSplitter, QWidget

#: room kept for the window manager's frame before the window is shown (its title bar and
#: borders are not known until then)
FRAME_ALLOWANCE = QSize(12, 36)

#: the red "not compliant" banner of the run header and the history's run tab
BANNER_STYLE = ("color: white; background: #b03030; padding: 3px 8px; border-radius: 3px;"
                "font-weight: bold;")


def screen_of(window: QWidget) -> QScreen:
    return window.screen() or QGuiApplication.primaryScreen()


def frame_extra(window: QWidget) -> QSize:
    """What the window manager's frame adds to the window's size: measured once the window
    is shown, :data:`FRAME_ALLOWANCE` before."""
    extra = window.frameGeometry().size() - window.geometry().size()
    if window.isVisible() and extra.height() > 0:
        return extra
    return FRAME_ALLOWANCE


def fit_to_screen(window: QWidget, preferred: QSize) -> None:
    """Resize ``window`` to ``preferred``, but never larger than its screen's available area
    (frame included), and move it so that all of it is on that screen."""
    room = screen_of(window).availableGeometry()
    window.resize(preferred.boundedTo(room.size() - frame_extra(window)))
    keep_on_screen(window)


def keep_on_screen(window: QWidget) -> None:
    """A geometry restored from a larger monitor (or a window grown past the screen) is
    shrunk and moved back so its frame lies inside the available area."""
    room = screen_of(window).availableGeometry()
    extra = frame_extra(window)
    window.resize(window.size().boundedTo(room.size() - extra))
    frame = QSize(window.width() + extra.width(), window.height() + extra.height())
    x = min(max(window.x(), room.left()), room.right() + 1 - frame.width())
    y = min(max(window.y(), room.top()), room.bottom() + 1 - frame.height())
    if (x, y) != (window.x(), window.y()):
        window.move(x, y)  # a top-level's position is its frame's


def banner_label(text: str = "") -> QLabel:
    """A verdict banner that wraps: it gets a row of its own, so a long reason adds a line
    instead of widening the window past the screen."""
    banner = QLabel(text)
    banner.setWordWrap(True)
    banner.setStyleSheet(BANNER_STYLE)
    banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return banner


def remember_splitter(splitter: QSplitter, settings: QSettings, key: str) -> None:
    """Restore ``splitter``'s sizes from ``settings`` and store them whenever they are
    dragged, so a technician's layout survives the next run and the next start."""
    state = settings.value(key)
    if isinstance(state, (QByteArray, bytes)):
        splitter.restoreState(QByteArray(state))

    def store(*_args) -> None:
        settings.setValue(key, splitter.saveState())

    splitter.splitterMoved.connect(store)
