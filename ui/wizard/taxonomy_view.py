"""The taxonomy questions as the wizard shows them, independent of Qt.

The technician answers the classification attributes and the level is *derived* by
``app.method.taxonomy`` (docs/method-notes.md §1: the highest level whose required attributes
are all met, with the reason each higher level is ruled out). This module calls that module
directly and typed: the questions are ``SutAttributes``' own fields, the categories the
taxonomy file's, the level ``classify``'s. There is no fallback: a refusal the rules make
(answers that meet no level, an untestable category) is a :class:`TaxonomyError` the page
shows in the rules' own words, and anything else the rules raise is a bug that must fail
loudly, not turn into a manual choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, get_args

from app.method import taxonomy as rules
from app.method.loader import all_methods
from app.method.model import Method
from app.method.taxonomy_terms import NEEDS


@dataclass(frozen=True)
class CategoryChoice:
    id: str
    label: str
    testable: bool = True
    reason: str = ""


@dataclass(frozen=True)
class Question:
    name: str
    label: str
    kind: str  # "bool" | "int" | "choice"
    choices: tuple[str, ...] = ()
    default: Any = None


@dataclass(frozen=True)
class Derived:
    taxonomy: str  # "online-3"
    label: str
    ruled_out: tuple[str, ...] = field(default_factory=tuple)
    reason: str = ""


#: each attribute's label on the page (every ``SutAttributes`` field but the category)
LABELS = {"connectivity": "Connectivity", "consumer_component": "Consumer/component product",
          "integrated_controller": "Integrated storage controller",
          "storage_protection": "Storage protection (RAID, mirroring …)",
          "no_spof": "No single point of failure",
          "non_disruptive_service": "Non-disruptive serviceability",
          "fba_ckd": "FBA/CKD support", "max_drive_count": "Maximum configuration (drives)",
          "robotics": "Robotics"}
#: level-requirement keys that are answered through a differently named attribute
REQUIREMENT_ATTRIBUTE = {"max_config": "max_drive_count"}


def _question(name: str, default: Any) -> Question:
    """The question for one ``SutAttributes`` field; a field added there without a kind here
    fails at import, so the wizard never silently omits an attribute."""
    if name == "connectivity":
        return Question(name, LABELS[name], "choice", get_args(rules.Connectivity), default)
    if name == "max_drive_count":
        return Question(name, LABELS[name], "int", (), default)
    if name in NEEDS:
        return Question(name, LABELS[name], "bool", (), default)
    raise TypeError(f"SutAttributes.{name} has no question in the wizard")


#: every attribute question, in ``SutAttributes``' field order
QUESTIONS = tuple(_question(f.name, f.default) for f in fields(rules.SutAttributes)
                  if f.name != "category")


def reference_method() -> Method | None:
    """The method whose taxonomy file the wizard asks about: the compliant one when installed
    (abbreviated variants inherit its taxonomy)."""
    methods = all_methods()
    compliant = [m for m in methods.values() if m.compliant]
    return (compliant or list(methods.values()) or [None])[0]


class WizardTaxonomy:
    """The method's taxonomy (``app.method.taxonomy``) as the wizard's page asks it."""

    def __init__(self, method: Method | None = None) -> None:
        self.taxonomy = rules.load_taxonomy(method)

    def categories(self) -> list[CategoryChoice]:
        """Every category of the taxonomy file, the untestable ones with their reason."""
        return [CategoryChoice(c.id, c.title, c.testable, c.reason)
                for c in self.taxonomy.categories]

    def questions(self, category: str) -> list[Question]:
        """The attributes some level of this category requires, so a Removable library is
        never asked about FBA/CKD."""
        required: set[str] = set()
        for level in self.taxonomy.category(category).levels:
            required |= {REQUIREMENT_ATTRIBUTE.get(k, k)
                         for k in level.model_dump(exclude_none=True) if k != "level"}
        return [q for q in QUESTIONS if q.name in required]

    def derive(self, category: str, answers: dict[str, Any]) -> Derived:
        """The level the rules derive; a :class:`~app.method.taxonomy.TaxonomyError` when the
        answers classify as nothing (the page shows its text)."""
        result = rules.classify(self.taxonomy, rules.SutAttributes(category=category,
                                                                   **answers))
        return Derived(result.id, result.label, tuple(r.reason for r in result.ruled_out))
