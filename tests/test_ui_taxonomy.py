"""The taxonomy page's adapter: questions come from SutAttributes' fields, the level from
``classify``; an unusable module falls back to the manual choice instead of breaking the
wizard. The module below is a test double of the contract, not the real taxonomy."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Literal

import pytest

from ui.wizard import taxonomy_auto
from ui.wizard.taxonomy_auto import current_taxonomy
from ui.wizard.taxonomy_view import ManualTaxonomy


@dataclass(frozen=True)
class SutAttributes:
    category: str = "online"
    connectivity: Literal["not specified", "single/multi host", "network"] = "not specified"
    integrated_controller: bool = False
    max_drives: int = 1


@dataclass(frozen=True)
class Classification:
    id: str
    label: str
    ruled_out: tuple[str, ...] = field(default_factory=tuple)


def _classify(attrs: SutAttributes, taxonomy=None) -> Classification:
    if attrs.integrated_controller and attrs.max_drives >= 12:
        return Classification(f"{attrs.category}-3", "Online 3", ("level 4: needs no SPOF",))
    return Classification(f"{attrs.category}-2", "Online 2",
                          ("level 3: needs an integrated controller and ≥ 12 drives",))


def contract_module() -> types.ModuleType:
    module = types.ModuleType("app.method.taxonomy")
    module.SutAttributes = SutAttributes
    module.classify = _classify
    module.load_taxonomy = lambda: types.SimpleNamespace(categories=(
        types.SimpleNamespace(id="online", title="Online", testable=True),
        types.SimpleNamespace(id="adjunct", title="Adjunct Product", testable=False,
                              reason="no test procedure")))
    return module


def test_questions_and_level_come_from_the_taxonomy_module(monkeypatch) -> None:
    monkeypatch.setattr(taxonomy_auto, "taxonomy_rules", contract_module())
    taxonomy = current_taxonomy()
    assert taxonomy.automatic
    questions = {q.name: q for q in taxonomy.questions("online")}
    assert set(questions) == {"connectivity", "integrated_controller", "max_drives"}
    assert questions["connectivity"].choices == ("not specified", "single/multi host",
                                                 "network")
    assert questions["integrated_controller"].kind == "bool"
    low = taxonomy.derive("online", {"integrated_controller": False, "max_drives": 24})
    assert low.taxonomy == "online-2" and "integrated controller" in low.ruled_out[0]
    high = taxonomy.derive("online", {"integrated_controller": True, "max_drives": 24})
    assert high.taxonomy == "online-3"
    cats = {c.id: c for c in taxonomy.categories()}
    assert not cats["adjunct"].testable and cats["adjunct"].reason
    assert not cats["interconnect"].testable  # always listed, even if the module omits it


def test_the_page_shows_derived_level_and_reasons(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(taxonomy_auto, "taxonomy_rules", contract_module())
    from ui.wizard.taxonomy_page import TaxonomyPage

    page = TaxonomyPage()
    qtbot.addWidget(page)
    page.set_answer("max_drives", 24)
    assert page.derived.taxonomy == "online-2"
    assert "integrated controller" in page.ruled_out.text()
    page.set_answer("integrated_controller", True)
    assert page.derived.taxonomy == "online-3"
    assert "no SPOF" in page.ruled_out.text()


def test_an_incompatible_module_falls_back_to_the_manual_choice(monkeypatch) -> None:
    broken = contract_module()
    broken.classify = lambda *a, **k: (_ for _ in ()).throw(ValueError("bad attributes"))
    monkeypatch.setattr(taxonomy_auto, "taxonomy_rules", broken)
    taxonomy = current_taxonomy()
    assert isinstance(taxonomy, ManualTaxonomy)
    assert "bad attributes" in taxonomy.derive("online", {"level": 2}).reason


@pytest.mark.parametrize("level", [1, 4])
def test_manual_choice_builds_the_taxonomy_id(level: int) -> None:
    assert ManualTaxonomy().derive("near-online", {"level": level}).taxonomy == \
        f"near-online-{level}"
