"""Driver drop-downs that say what each driver speaks to (issue 41: the list showed bare ids;
"wt300" means nothing to a technician holding a WT310E).

The items stay the registry's ids — what the page reads, stores and the command line takes —
and the list draws each as ``wt300 — WT310, WT310E, WT330, WT333E``; the closed box keeps the
id and the item's tooltip names the models too."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyledItemDelegate

from ui.wizard.connection import SIMULATED, driver_models

#: what the choices that are no registry driver mean
CHOICE_WORDS = {SIMULATED: "the simulated lab's instrument", "none": "no thermometer"}


def driver_label(driver: str) -> str:
    """``wt300 — WT310, WT310E, WT330, WT333E``; the id alone when nothing is known of it."""
    words = driver_models(driver) or CHOICE_WORDS.get(driver, "")
    return f"{driver} — {words}" if words else driver


class DriverLabels(QStyledItemDelegate):
    """Draws each driver id of a drop-down's list as :func:`driver_label`."""

    def displayText(self, value, locale) -> str:  # noqa: N802 (Qt's name)
        return driver_label(str(value))


def describe_drivers(choice: QComboBox) -> None:
    """The list of ``choice`` drawn with its models, each item's tooltip naming them."""
    choice.setItemDelegate(DriverLabels(choice))
    for i in range(choice.count()):
        if models := driver_models(choice.itemText(i)):
            choice.setItemData(i, f"speaks to: {models}", Qt.ItemDataRole.ToolTipRole)
