"""Small dialogs of a run's sign-off: a technician's COM result, QA's approval.

Both only collect what the entry needs; the rules (which COM may take a result, which revision
is approved) are :mod:`app.rules.com_verdict`'s and :mod:`app.signoff.revisions`'s, so the GUI and
``storwatt runs com`` / ``runs approve`` refuse the same things with the same words.
"""

from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget)

from app.rules.com_verdict import ComVerdict
from app.core.records import ComOutcome
from app.sequencer.capacity_optimisation import observed
from app.signoff.revisions import SignOff


class _EntryDialog(QDialog):
    """Author and text under an explanation, OK / Cancel."""

    def __init__(self, title: str, explanation: str, text_hint: str, author: str,
                 parent: QWidget | None, concern: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.author = QLineEdit(author)
        self.author.setPlaceholderText("your name (recorded with the entry)")
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(text_hint)
        self.text.setMaximumHeight(110)
        note = QLabel(explanation)
        note.setWordWrap(True)
        self.form = QFormLayout()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(self.form)
        self.form.addRow("Author:", self.author)
        self.form.addRow(text_hint.split(":")[0] + ":", self.text)
        #: why QA signs a SIMULATED or NON-COMPLIANT run anyway (app.signoff.revisions refuses it
        #: empty)
        self.why = QLineEdit()
        if concern:
            warning = QLabel(f"This run is {concern}. Signing it off needs a confirmation "
                             "that names why; it is printed with the entry on the report.")
            warning.setWordWrap(True)
            warning.setStyleSheet("color: #c83232; font-weight: bold;")
            layout.insertWidget(1, warning)
            self.why.setPlaceholderText("why you sign it off anyway")
            self.form.addRow("Confirm — why:", self.why)
        layout.addWidget(buttons)
        self.resize(520, 300)


class ComResultDialog(_EntryDialog):
    """The technician's heuristic result for one available COM the station did not measure."""

    def __init__(self, coms: tuple[ComVerdict, ...], author: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__("Record COM result", "The heuristic check of a capacity optimisation "
                         "the station could not observe. The entry is added to the run's audit "
                         "trail and makes a new revision of the record.",
                         "Evidence: what was checked and seen", author, parent)
        self.com = QComboBox()
        for v in coms:
            if v.available and not observed(v.metric):  # the rule record_com_result applies
                self.com.addItem(f"{v.title} — now {v.state.value}", v.com_id)
        self.outcome = QComboBox()
        for outcome in ComOutcome:
            self.outcome.addItem(outcome.value.replace("-", " "), outcome.value)
        # no result pre-set: a PASSED must be chosen, never the default of a hurried OK
        self.outcome.setPlaceholderText("choose what the check showed")
        self.outcome.setCurrentIndex(-1)
        self.form.insertRow(0, "COM:", self.com)
        self.form.insertRow(1, "Result:", self.outcome)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c83232;")
        self.layout().insertWidget(self.layout().count() - 1, self.problem)

    def missing(self) -> str:
        """What must still be entered before OK can record the result ("" when complete)."""
        lacking = [name for name, empty in (
            ("the COM", not self.com.currentData()),
            ("the result", self.outcome.currentIndex() < 0),
            ("the evidence", not self.text.toPlainText().strip()),
            ("your name", not self.author.text().strip())) if empty]
        return ", ".join(lacking)

    def accept(self) -> None:
        """OK records nothing incomplete: the dialog stays open, with what is typed kept, and
        says what is missing (it used to close and throw the evidence away)."""
        if lacking := self.missing():
            self.problem.setText(f"Enter {lacking} to record the result.")
            return
        super().accept()

    def values(self) -> tuple[str, str, str, str]:
        """(COM id, outcome, evidence, author) as typed."""
        return (self.com.currentData() or "", self.outcome.currentData(),
                self.text.toPlainText(), self.author.text())


class ApprovalDialog(_EntryDialog):
    """QA approves the revision shown, bound to its SHA-256."""

    def __init__(self, signoff: SignOff, author: str = "",
                 parent: QWidget | None = None, concern: str = "") -> None:
        current = signoff.current
        super().__init__(f"Approve revision {current.number}",
                         f"You approve revision {current.number} of this run's record, SHA-256 "
                         f"{current.sha256}. A later revision (a new COM result or disposition) "
                         "will show this approval as applying to revision "
                         f"{current.number} only.", "Statement: what you attest", author, parent,
                         concern)

    def values(self) -> tuple[str, str, str]:
        """(statement, author, confirmation) as typed."""
        return self.text.toPlainText(), self.author.text(), self.why.text()


class AcceptDialog(_EntryDialog):
    """QA accepts the run: a disposition that cannot be edited or removed, so it is
    confirmed here, and a SIMULATED or NON-COMPLIANT run needs the reason it is accepted."""

    def __init__(self, run_id: str, reason: str = "", author: str = "",
                 parent: QWidget | None = None, concern: str = "") -> None:
        super().__init__("Accept run", f"You accept run {run_id[:8]}. The disposition is added "
                         "to its audit trail and cannot be edited or removed.",
                         "Reason: why the run is accepted", author, parent, concern)
        self.text.setPlainText(reason)

    def values(self) -> tuple[str, str, str]:
        """(reason, author, confirmation) as typed."""
        return self.text.toPlainText(), self.author.text(), self.why.text()
