"""No two Alt-keys on one wizard page (issue 41, seen 5: Alt+N on the SUT page went to Notes,
not Next). Every page's labels, buttons and group boxes are read with the wizard's own buttons
that show on that page (Back from the second page, Next before the last, Start run on the
last), so a new field that takes a letter already in use fails here, whichever page it is on."""

from __future__ import annotations

import re
from collections import defaultdict

from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QWizard

from ui.wizard.wizard import NewRunWizard

MNEMONIC = re.compile(r"&([^&\s])")


def mnemonic(text: str) -> str | None:
    found = MNEMONIC.search(text.replace("&&", ""))
    return found.group(1).lower() if found else None


def clashes(texts: list[str]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = defaultdict(list)
    for text in texts:
        key = mnemonic(text)
        if key:
            keys[key].append(text)
    return {k: v for k, v in keys.items() if len(v) > 1}


def page_texts(wizard: NewRunWizard, page_id: int) -> list[str]:
    page = wizard.page(page_id)
    texts = [w.title() if isinstance(w, QGroupBox) else w.text()
             for kind in (QAbstractButton, QLabel, QGroupBox) for w in page.findChildren(kind)]
    ids = wizard.pageIds()
    shown = [QWizard.WizardButton.BackButton] if page_id != ids[0] else []
    shown.append(QWizard.WizardButton.NextButton if page_id != ids[-1]
                 else QWizard.WizardButton.FinishButton)
    return texts + [wizard.buttonText(b) for b in shown]


def test_no_wizard_page_gives_one_alt_key_to_two_controls(qtbot) -> None:
    wizard = NewRunWizard(None)
    qtbot.addWidget(wizard)
    found = {type(wizard.page(i)).__name__: clashes(page_texts(wizard, i))
             for i in wizard.pageIds()}
    assert len(found) >= 5
    assert {page: c for page, c in found.items() if c} == {}


def test_the_check_sees_a_clash_case_blind() -> None:
    assert clashes(["&Notes:", "&Next >", "Sa&ve", "&vendor", "Tom && &Jerry", "plain"]) == {
        "n": ["&Notes:", "&Next >"], "v": ["Sa&ve", "&vendor"]}
