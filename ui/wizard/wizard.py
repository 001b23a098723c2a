"""The new-run wizard (QWizard): taxonomy → SUT → workload → instruments → review → Start.

Each page copies its widgets into one :class:`RunEntries`; Back never resets a page (pages
fill their widgets only from :meth:`NewRunWizard.load`), and every rule that blocks Next lives in
``app.station.run_entries`` where it is tested without Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QWidget, QWizard

from app.core.records import RunConfig
from ui.widgets.confirm import Confirm, ask_yes_no
from ui.wizard.base import EntryPage
from ui.wizard.instruments_page import InstrumentsPage
from app.station.run_entries import RunEntries, config_from_entries, with_max_config_default
from app.rules.run_fields import EntryError, drives_within_max_config
from ui.wizard.profiles import SutProfileStore
from ui.wizard.review_page import RangeAdvice, ReviewPage
from ui.wizard.sut_page import SutPage
from ui.wizard.taxonomy_page import TaxonomyPage
from ui.wizard.workload_page import WorkloadPage


class NewRunWizard(QWizard):
    def __init__(self, parent: QWidget | None = None, *, entries: RunEntries | None = None,
                 simulated_lab: str = "sim", store: SutProfileStore | None = None,
                 protected: Sequence[str] = (), confirm: Confirm = ask_yes_no,
                 range_advice: RangeAdvice | None = None) -> None:
        """``protected``: the station's own files (``app.core.protected.station_paths``), which the
        workload page refuses as fio targets; ``confirm`` asks before a compliant (hours-long)
        run starts; ``range_advice`` offers a stored range plan of the same SUT on the review
        page (method-notes §3)."""
        super().__init__(parent)
        self.setWindowTitle("New run — StorWatt")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setButtonText(QWizard.WizardButton.FinishButton, "&Start run")
        self.setButtonText(QWizard.WizardButton.NextButton, "&Next >")
        self.setButtonText(QWizard.WizardButton.BackButton, "< &Back")
        # the station's --lab decides what 'simulated' means, whatever an earlier run used
        self.base = replace(entries or RunEntries(), simulated_lab=simulated_lab)
        self.taxonomy_page = TaxonomyPage()
        self.sut_page = SutPage(store)
        self.workload_page = WorkloadPage(simulated_lab, protected)
        self.instruments_page = InstrumentsPage()
        self.review_page = ReviewPage(confirm, range_advice)
        self.pages: list[EntryPage] = [self.taxonomy_page, self.sut_page, self.workload_page,
                                       self.instruments_page, self.review_page]
        for page in self.pages:
            self.addPage(page)
        self.resize(900, 680)
        self.taxonomy_page.answers_changed.connect(self.check_max_config)
        self.sut_page.drive_count.valueChanged.connect(self.check_max_config)
        self.load(self.base)
        # Start is a deliberate click: Enter on the review page (e.g. after typing the
        # operator's name) must not begin an hours-long run
        self.button(QWizard.WizardButton.FinishButton).installEventFilter(self)

    ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)

    def _swallows_enter(self, event: QEvent) -> bool:
        return (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in self.ENTER_KEYS and self.currentPage() is self.review_page)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt naming)
        if self._swallows_enter(event):
            self.review_page.hint_start()
            event.accept()
            return
        super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        """Enter on the focused Start button is swallowed too (Space still presses it)."""
        if self._swallows_enter(event):
            self.review_page.hint_start()
            return True
        return super().eventFilter(watched, event)

    def load(self, entries: RunEntries) -> None:
        """Fill every page (used once at construction: a new run or a repeated set-up); an
        unanswered maximum configuration starts at the SUT's drive count, as on the command
        line."""
        entries = with_max_config_default(entries)
        for page in self.pages:
            page.load(entries)
        self.check_max_config()

    def check_max_config(self) -> None:
        """The SUT's drive count (page 2) against the maximum configuration answered on the
        classification page (the rule: ``app.rules.run_fields.drives_within_max_config``). A
        conflict is said on both pages as soon as it arises; the SUT page's *Next* stays
        disabled until one is corrected. The classification page's does not: the drive count
        it is compared with may still be the pre-filled example the technician has not
        reached yet (a one-drive unit answered before the 50-drive example is replaced)."""
        try:
            drives_within_max_config(self.sut_page.drive_count.value(),
                                     self.taxonomy_page.answers())
            message = ""
        except EntryError as exc:
            message = exc.message
        self.taxonomy_page.set_conflict(
            message and f"{message} (The drive count is on the next page.)", blocks=False)
        self.sut_page.set_conflict(message)

    def entries(self) -> RunEntries:
        e = self.base
        for page in self.pages:
            e = page.collect(e)
        return e

    def run_config(self) -> RunConfig:
        return config_from_entries(self.entries())
