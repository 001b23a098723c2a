"""Light/dark appearance that follows the system palette.

The station does not impose a theme: Qt's style already follows the desktop. Only the plots
need telling, since pyqtgraph draws its own background; curve colours are chosen to read on
both (mid-saturation hues, no pure black/white lines).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QGuiApplication, QPalette


@dataclass(frozen=True)
class PlotColours:
    background: str
    foreground: str
    power: str = "#e0882a"
    temperature: str = "#d04a6a"
    iops: str = "#2f8fd0"
    mibs: str = "#38a858"
    efficiency: str = "#8a5cd0"
    wma: str = "#e0b020"
    band: tuple[int, int, int, int] = (224, 176, 32, 50)
    level: str = "#7f7f7f"
    ceiling: str = "#d03030"


#: the smallest a live plot may get: three rows of plots (the per-input row included), the
#: wrapping header rows and the metrics table must leave the station's window shorter than a
#: 1280 × 720 screen less its title bar (tests/test_ui_laptop_screens.py)
PLOT_MIN_HEIGHT = 120

def system_is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background is dark (desktop dark mode or a dark Qt style)."""
    if palette is None:
        palette = QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def plot_colours(dark: bool | None = None) -> PlotColours:
    dark = system_is_dark() if dark is None else dark
    return PlotColours("#1e1e1e", "#d8d8d8") if dark else PlotColours("#ffffff", "#303030")


def apply_plot_theme(dark: bool | None = None) -> PlotColours:
    """Configure pyqtgraph before plots are created; returns the colours used."""
    colours = plot_colours(dark)
    pg.setConfigOptions(background=colours.background, foreground=colours.foreground,
                        antialias=False)
    return colours
