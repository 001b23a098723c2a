"""The taxonomy page drives ``app.method.taxonomy`` directly (method-notes §1): questions are
``SutAttributes``' fields a category's levels require, the level is ``classify``'s, a refusal
is the rules' own message, and a bug in the rules fails loudly instead of falling back to a
manual choice (issue 31)."""

from __future__ import annotations

import pytest

from app.method import taxonomy as rules
from ui.wizard.taxonomy_view import QUESTIONS, WizardTaxonomy, reference_method

ONLINE_3 = {"connectivity": "network", "consumer_component": False,
            "integrated_controller": True, "storage_protection": True, "max_drive_count": 24}


def test_questions_and_level_come_from_the_taxonomy_module() -> None:
    taxonomy = WizardTaxonomy(reference_method())
    assert [q.name for q in QUESTIONS] == [f for f in rules.SutAttributes.__dataclass_fields__
                                           if f != "category"]
    online = {q.name: q for q in taxonomy.questions("online")}
    assert "robotics" not in online and online["integrated_controller"].kind == "bool"
    assert online["connectivity"].choices == ("not-specified", "host", "network")
    assert online["max_drive_count"].kind == "int"
    assert "fba_ckd" not in {q.name for q in taxonomy.questions("removable")}
    high = taxonomy.derive("online", ONLINE_3)
    assert (high.taxonomy, high.label) == ("online-3", "Online 3")
    assert high.ruled_out[-1].startswith("Online 4 needs no single point of failure")
    cats = {c.id: c for c in taxonomy.categories()}
    assert cats["online"].testable and cats["removable"].label == "Removable Media Library"
    assert not cats["adjunct"].testable and "no classification" in cats["adjunct"].reason
    assert not cats["interconnect"].testable  # from the taxonomy file itself


def test_the_page_shows_derived_level_reasons_and_the_rules_refusal(qtbot) -> None:
    from ui.wizard.taxonomy_page import TaxonomyPage

    page = TaxonomyPage()
    qtbot.addWidget(page)
    assert page.category_id() == "online" and page.derived.taxonomy == "online-1"
    for name, value in ONLINE_3.items():
        page.set_answer(name, value)
    assert page.derived.taxonomy == "online-3"
    assert "Online 3" in page.derived_label.text()
    assert "no single point of failure" in page.ruled_out.text()
    page.set_answer("max_drive_count", 2)  # 2 drives, not a consumer product: no level
    assert page.derived is None
    assert ("No classification:</b> the answers meet no Online level:<br>Online 6 needs"
            in page.derived_label.text())


def test_a_bug_in_the_taxonomy_rules_fails_loudly(qtbot, monkeypatch) -> None:
    """No catch-all: a rule that raises (even a ValueError, which the old page swallowed)
    reaches the caller; the wizard does not open on a manual choice instead."""
    from ui.wizard.taxonomy_page import TaxonomyPage

    def broken(*_args, **_kwargs):
        raise ValueError("rule bug")

    monkeypatch.setattr(rules, "unmet", broken)
    with pytest.raises(ValueError, match="rule bug"):
        WizardTaxonomy(reference_method()).derive("online", {})
    with pytest.raises(ValueError, match="rule bug"):
        TaxonomyPage()
