"""Taxonomy page: the product category and the classification attributes; the level is
derived from the answers and the reasons higher levels are ruled out are shown. Adjunct
Product and Interconnect Element appear disabled, with the reason (method-notes §1)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel,
                               QSpinBox, QVBoxLayout, QWidget)

from ui.wizard.base import EntryPage, with_changes
from app.station.run_entries import EntryError, RunEntries
from app.method.taxonomy import TaxonomyError
from ui.wizard.taxonomy_view import (CategoryChoice, Derived, Question, WizardTaxonomy,
                                     reference_method)


class TaxonomyPage(EntryPage):
    #: an answer changed (the wizard checks the maximum configuration against the drives)
    answers_changed = Signal()

    def __init__(self, taxonomy: WizardTaxonomy | None = None) -> None:
        super().__init__("Classification", "Answer for the system as configured; the "
                         "taxonomy level is derived from the answers.")
        self.taxonomy = taxonomy or WizardTaxonomy(reference_method())
        self.category = QComboBox()
        self.category.setAccessibleName("Category")
        self.choices: list[CategoryChoice] = self.taxonomy.categories()
        model = QStandardItemModel(self.category)
        for c in self.choices:
            text = c.label if c.testable else f"{c.label} — not testable: {c.reason}"
            item = QStandardItem(text)
            item.setData(c.id, 256)
            item.setEnabled(c.testable)
            item.setToolTip(c.reason or c.label)
            model.appendRow(item)
        self.category.setModel(model)
        self.questions_box = QGroupBox("Classification attributes")
        self.questions_form = QFormLayout(self.questions_box)
        self.answer_widgets: dict[str, QWidget] = {}
        self.derived_label = QLabel("")
        self.derived_label.setWordWrap(True)
        self.ruled_out = QLabel("")
        self.ruled_out.setWordWrap(True)
        self.untestable = QLabel("Not testable (shown for completeness): " + "; ".join(
            f"{c.label} — {c.reason}" for c in self.choices if not c.testable))
        self.untestable.setWordWrap(True)
        self.untestable.setEnabled(False)
        form = QFormLayout()
        form.addRow("&Category:", self.category)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.questions_box)
        layout.addWidget(self.conflict)
        layout.addWidget(self.derived_label)
        layout.addWidget(self.ruled_out)
        layout.addStretch(1)
        layout.addWidget(self.untestable)
        layout.addWidget(self.error)
        self.derived: Derived | None = None
        self._answers_by_category: dict[str, dict[str, Any]] = {}
        #: the answers loaded (an earlier run's, or the defaults the wizard derives from the
        #: SUT) and the last given: a category shown later starts from them, not from the
        #: taxonomy's defaults
        self._loaded: dict[str, Any] = {}
        self.category.currentIndexChanged.connect(self._category_changed)
        first = next(i for i, c in enumerate(self.choices) if c.testable)
        self.category.setCurrentIndex(first)
        self._category_changed()

    # --- questions --------------------------------------------------------------------------
    def category_id(self) -> str:
        return self.category.currentData(256) or ""

    def _category_changed(self) -> None:
        previous = getattr(self, "_shown_category", None)
        if previous:
            self._answers_by_category[previous] = self.answers()
            # the same product: an attribute answered for one category stands for the next
            self._loaded = {**self._loaded, **self.answers()}
        while self.questions_form.rowCount():
            self.questions_form.removeRow(0)
        self.answer_widgets.clear()
        cat = self.category_id()
        self._shown_category = cat
        keep = self._answers_by_category.get(cat, {})
        for q in self.taxonomy.questions(cat):
            widget = self._widget_for(q, keep.get(q.name, self._loaded.get(q.name, q.default)))
            self.answer_widgets[q.name] = widget
            self.questions_form.addRow(q.label + ":", widget)
        self.update_derived()

    def _widget_for(self, q: Question, value: Any) -> QWidget:
        if q.kind == "bool":
            w = QCheckBox()
            w.setChecked(bool(value))
            w.toggled.connect(self.update_derived)
        elif q.kind == "int":
            w = QSpinBox()
            w.setRange(0, 1_000_000)
            w.setValue(int(value or 0))
            w.valueChanged.connect(self.update_derived)
        else:
            w = QComboBox()
            w.addItems(list(q.choices))
            if value is not None:
                w.setCurrentText(str(value))
            w.currentTextChanged.connect(self.update_derived)
        w.setAccessibleName(q.label)
        return w

    def answers(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, w in self.answer_widgets.items():
            if isinstance(w, QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, QSpinBox):
                out[name] = w.value()
            elif isinstance(w, QComboBox):
                out[name] = w.currentText()
        return out

    def set_answer(self, name: str, value: Any) -> None:
        w = self.answer_widgets[name]
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QSpinBox):
            w.setValue(int(value))
        elif isinstance(w, QComboBox):
            w.setCurrentText(str(value))

    def update_derived(self) -> None:
        try:
            self.derived = self.taxonomy.derive(self.category_id(), self.answers())
        except TaxonomyError as exc:  # the rules' refusal, in their words; a bug propagates
            self.derived = None
            reasons = html.escape(str(exc)).replace("\n", "<br>")  # one level per line
            self.derived_label.setText(f"<b>No classification:</b> {reasons}")
            self.ruled_out.setText("")
            return
        d = self.derived
        self.derived_label.setText(f"<b>Derived classification:</b> {d.label} "
                                   f"(<code>{d.taxonomy}</code>)"
                                   + (f" — {d.reason}" if d.reason else ""))
        self.ruled_out.setText("<br>".join(f"✘ {r}" for r in d.ruled_out))
        self.answers_changed.emit()

    # --- entries ----------------------------------------------------------------------------
    def collect(self, e: RunEntries) -> RunEntries:
        if self.derived is None:
            return with_changes(e, taxonomy="")
        reason = self.derived.reason or ""
        if self.derived.ruled_out:
            reason = (reason + "; " if reason else "") + "; ".join(self.derived.ruled_out)
        return with_changes(e, taxonomy=self.derived.taxonomy, classification_reason=reason,
                            classification_answers=self.answers())

    def load(self, e: RunEntries) -> None:
        """Pre-fill from an earlier run: the answers it stored, so the fields show what gave
        its classification. A run stored before answers were kept (or whose answers no
        longer derive the same level) keeps its classification until an answer changes."""
        self._loaded = dict(e.classification_answers)
        head, _, level = e.taxonomy.rpartition("-")
        category = head if level.isdigit() else e.taxonomy
        index = self.category.findData(category, 256)
        if index >= 0:
            self.category.setCurrentIndex(index)
        for name, value in e.classification_answers.items():
            if name in self.answer_widgets:
                self.set_answer(name, value)
        self.update_derived()
        if e.taxonomy and self.derived is not None and self.derived.taxonomy != e.taxonomy:
            label = f"{category.replace('-', ' ').title()} {level}"
            self.derived = Derived(e.taxonomy, label, (), "as classified for the earlier run"
                                   + (f": {e.classification_reason}"
                                      if e.classification_reason else ""))
            self.derived_label.setText(f"<b>Classification kept from the earlier run:</b> "
                                       f"{label} (<code>{e.taxonomy}</code>). Change an "
                                       "answer to derive it again.")
            self.ruled_out.setText(e.classification_reason)

    def check(self, e: RunEntries) -> None:
        if self.derived is None or not e.taxonomy:
            raise EntryError("category", "The answers give no classification: check them.")
        chosen = next((c for c in self.choices if c.id == self.category_id()), None)
        if chosen is not None and not chosen.testable:
            raise EntryError("category", f"{chosen.label}: {chosen.reason}.")
