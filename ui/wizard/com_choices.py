"""The SUT page's capacity optimisation methods (COMs): per COM "Available in SUT" and "On
during test", declared separately as the seed's Test Data Report discloses them and as
``storwatt run --com`` / ``--com-off`` take them (docs/method-notes.md §2 phase 4: "if vendor
declares to have a COM it must be tested and on during active test phase"; thin provisioning
may be available and off).

The two boxes are coupled because "on" without "available" is refused by the run
(``app.sequencer.capacity_optimisation.check_declared_coms``): ticking On ticks Available,
clearing Available clears On — the page can never hold that contradiction.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QLabel

from app.sequencer.capacity_optimisation import PARITY_RAID

AVAILABLE_TIP = ("Available in SUT: {title} is a feature of this SUT. The report discloses it, "
                 "and a COM check runs for it after ready idle (docs/method-notes.md §2 phase "
                 "4); the COM verdict (PASSED, NOT PASSED, NOT VERIFIED) is about this COM.")
ON_TIP = ("On during test: {title} was enabled during the active test (implies Available). "
          "Leave it clear for a COM the SUT has but that was not on during the active test: "
          "the report then says available YES, on NO — the method asks a declared COM to be "
          "on during the active test.")
#: parity RAID is not a switch (app.sequencer.capacity_optimisation): the boxes add nothing
PARITY_TIP = (" Parity RAID follows the RAID level: RAID 5/6/50/60 make it available and on "
              "whether or not it is ticked; ticking it on RAID 0/1/10 is refused.")


@dataclass(frozen=True)
class ComRow:
    """One COM's two checkboxes."""

    available: QCheckBox
    on: QCheckBox


class ComChoices(QGroupBox):
    """A grid: one column per COM (its title above), rows "Available in SUT" and "On during
    test" — three short rows, so the SUT page still fits a 768-px screen."""

    def __init__(self, choices: dict[str, str]) -> None:
        super().__init__("Capacity optimisation methods (COMs; each available one is checked "
                         "after ready idle)")
        grid = QGridLayout(self)
        grid.setVerticalSpacing(2)
        grid.addWidget(QLabel("Available in SUT"), 1, 0)
        grid.addWidget(QLabel("On during test"), 2, 0)
        self.rows: dict[str, ComRow] = {}
        for column, (com_id, title) in enumerate(choices.items(), start=1):
            heading = QLabel(title)
            heading.setWordWrap(True)
            heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
            note = PARITY_TIP if com_id == PARITY_RAID else ""
            heading.setToolTip(com_id + note)
            row = ComRow(QCheckBox(), QCheckBox())
            for box, what, tip in ((row.available, "available in SUT", AVAILABLE_TIP),
                                   (row.on, "on during test", ON_TIP)):
                box.setAccessibleName(f"{title}: {what}")
                box.setToolTip(tip.format(title=title) + note)
            row.on.toggled.connect(lambda on, r=row: on and r.available.setChecked(True))
            row.available.toggled.connect(lambda av, r=row: av or r.on.setChecked(False))
            grid.addWidget(heading, 0, column)
            grid.addWidget(row.available, 1, column, Qt.AlignmentFlag.AlignCenter)
            grid.addWidget(row.on, 2, column, Qt.AlignmentFlag.AlignCenter)
            grid.setColumnStretch(column, 1)
            self.rows[com_id] = row

    def declared(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(on during the test, available but off), as RunEntries holds them."""
        on = tuple(c for c, r in self.rows.items() if r.on.isChecked())
        off = tuple(c for c, r in self.rows.items()
                    if r.available.isChecked() and not r.on.isChecked())
        return on, off

    def show_declared(self, on: tuple[str, ...], off: tuple[str, ...]) -> tuple[str, ...]:
        """Tick the boxes; returns the ids no box offers (the page names them)."""
        for com_id, row in self.rows.items():
            row.available.setChecked(com_id in on or com_id in off)
            row.on.setChecked(com_id in on)
        return tuple(c for c in dict.fromkeys([*on, *off]) if c not in self.rows)
