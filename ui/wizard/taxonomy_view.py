"""The taxonomy questions as the wizard shows them, independent of Qt.

The technician answers the classification attributes and the level is *derived* by
``app.method.taxonomy`` (docs/method-notes.md §1: the highest level whose required attributes
are all met, with the reason each higher level is ruled out). When that cannot be driven (a method's
taxonomy file does not fit) the page falls back to an explicit category + level choice, and
says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.method.loader import all_methods

#: categories with no test procedure (method-notes §1): shown, never selectable
UNTESTABLE = {"adjunct": "Adjunct Product", "interconnect": "Interconnect Element"}
UNTESTABLE_REASON = "the method defines no test procedure for this category"


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


def _title(category_id: str) -> str:
    return category_id.replace("-", " ").title()


class ManualTaxonomy:
    """Fallback: category from the installed methods' plans, level chosen by hand."""

    automatic = False

    def __init__(self, why: str = "automatic classification is not available in this build"
                 ) -> None:
        self.why = why

    def categories(self) -> list[CategoryChoice]:
        seen: dict[str, CategoryChoice] = {}
        for method in all_methods().values():
            for cat in method.tested_categories():
                seen.setdefault(cat, CategoryChoice(cat, _title(cat)))
        choices = sorted(seen.values(), key=lambda c: c.id)
        choices += [CategoryChoice(k, v, False, UNTESTABLE_REASON) for k, v in UNTESTABLE.items()]
        return choices

    def questions(self, category: str) -> list[Question]:
        return [Question("level", "Level (from the SUT documentation)", "int", (), 3)]

    def derive(self, category: str, answers: dict[str, Any]) -> Derived:
        level = int(answers.get("level", 1))
        return Derived(f"{category}-{level}", f"{_title(category)} {level}", (),
                       f"chosen by hand ({self.why})")
