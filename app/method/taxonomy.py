"""Taxonomy: derive a SUT's classification (e.g. Online 3) from its attributes, with reasons.

SPEC-NOTES §1: the classification is the highest level whose required attributes are all met;
the technician may not pick a level the answers rule out, and the station shows why each
higher level is ruled out. The requirement tables are data (``taxonomy-*.toml``), loaded and
validated here into immutable objects.
"""

from __future__ import annotations

import operator
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from app.method.loader import MethodError
from app.method.model import Method
from app.paths import methods_dir

Connectivity = Literal["not-specified", "host", "network"]
#: connectivity is ordered: a network-connected product is also connected to hosts
CONNECTIVITY_RANK = {"not-specified": 0, "host": 1, "network": 2}
COMPARATORS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "==": operator.eq}

#: attribute → words used in "Online 4 needs …"
NEEDS = {
    "consumer_component": ("to be a consumer/component product",
                           "not to be a consumer/component product"),
    "integrated_controller": ("an integrated storage controller", ""),
    "storage_protection": ("storage protection", ""),
    "no_spof": ("no single point of failure", ""),
    "non_disruptive_service": ("non-disruptive serviceability", ""),
    "fba_ckd": ("FBA/CKD support", ""),
    "robotics": ("robotics", "no robotics"),
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LevelRequirements(_Frozen):
    level: int
    connectivity: Connectivity | None = None
    consumer_component: bool | None = None
    integrated_controller: bool | None = None
    storage_protection: bool | None = None
    no_spof: bool | None = None
    non_disruptive_service: bool | None = None
    fba_ckd: bool | None = None
    robotics: bool | None = None
    max_config: tuple[Literal[">=", ">", "<=", "=="], int] | None = None


class Category(_Frozen):
    id: str
    title: str
    testable: bool
    reason: str = ""
    access_pattern: str = ""
    max_ttfd: str = ""
    levels: tuple[LevelRequirements, ...] = ()

    def level(self, n: int) -> LevelRequirements | None:
        return next((lv for lv in self.levels if lv.level == n), None)


class Taxonomy(_Frozen):
    name: str
    level_names: dict[int, str]
    categories: tuple[Category, ...]

    def category(self, cid: str) -> Category:
        for c in self.categories:
            if c.id == cid:
                return c
        raise ValueError(f"unknown taxonomy category {cid!r}; categories: "
                         f"{', '.join(c.id for c in self.categories)}")

    def valid_ids(self) -> list[str]:
        return [f"{c.id}-{lv.level}" for c in self.categories if c.testable for lv in c.levels]


@dataclass(frozen=True)
class SutAttributes:
    """The wizard's answers about the product (SPEC-NOTES §1 attribute list)."""

    category: str
    connectivity: Connectivity = "not-specified"
    consumer_component: bool = False
    integrated_controller: bool = False
    storage_protection: bool = False
    no_spof: bool = False
    non_disruptive_service: bool = False
    fba_ckd: bool = False
    max_drive_count: int = 1
    robotics: bool = False


@dataclass(frozen=True)
class Classification:
    category: str
    level: int
    id: str  # "online-3"
    label: str  # "Online 3"
    ruled_out: tuple[tuple[int, str], ...]  # higher levels and why not

    @property
    def explanation(self) -> str:
        lines = [f"Classified as {self.label}."]
        lines += [f"Level {lvl} ruled out: {why}" for lvl, why in self.ruled_out]
        return "\n".join(lines)


@lru_cache(maxsize=None)
def load_taxonomy_file(path: Path) -> Taxonomy:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        return Taxonomy.model_validate(data)
    except FileNotFoundError:
        raise MethodError(f"{path}: taxonomy file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise MethodError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        keys = "; ".join(f"key '{'.'.join(map(str, e['loc']))}': {e['msg']}"
                         for e in exc.errors())
        raise MethodError(f"{path}: invalid taxonomy: {keys}") from None


def load_taxonomy(method: Method, directory: Path | None = None) -> Taxonomy:
    return load_taxonomy_file((directory or methods_dir()) / method.taxonomy_file)


def unmet(req: LevelRequirements, a: SutAttributes) -> list[str]:
    """What the product lacks for this level (empty: all requirements met)."""
    missing = []
    if req.connectivity and CONNECTIVITY_RANK[a.connectivity] < CONNECTIVITY_RANK[req.connectivity]:
        missing.append(f"{req.connectivity} connectivity (answered {a.connectivity})")
    for attr, (yes_text, no_text) in NEEDS.items():
        wanted = getattr(req, attr)
        if wanted is not None and getattr(a, attr) != wanted:
            missing.append(yes_text if wanted else no_text)
    if req.max_config:
        op, n = req.max_config
        if not COMPARATORS[op](a.max_drive_count, n):
            missing.append(f"a maximum configuration of {op} {n} drives "
                           f"(answered {a.max_drive_count})")
    return missing


def classify(taxonomy: Taxonomy, answers: SutAttributes) -> Classification:
    """Highest level whose requirements all hold; reasons for every higher level."""
    category = taxonomy.category(answers.category)
    if not category.testable:
        raise ValueError(f"{category.title} cannot be tested: {category.reason}")
    ruled_out: list[tuple[int, str]] = []
    for n in range(6, 0, -1):
        req = category.level(n)
        name = f"{category.title} {n}"
        if req is None:
            ruled_out.append((n, f"{name} is not defined by the method"))
            continue
        missing = unmet(req, answers)
        if not missing:
            return Classification(category.id, n, f"{category.id}-{n}", name, tuple(ruled_out))
        ruled_out.append((n, f"{name} needs " + ", ".join(missing)))
    raise ValueError(f"the answers meet no {category.title} level:\n" +
                     "\n".join(why for _, why in ruled_out))


def parse_taxonomy_id(taxonomy: Taxonomy, tid: str) -> tuple[str, int]:
    """``"online-3"`` → ("online", 3), or a ValueError listing the valid ids."""
    head, _, level = tid.rpartition("-")
    valid = ", ".join(taxonomy.valid_ids())
    if not level.isdigit() or not head:
        raise ValueError(f"taxonomy {tid!r} is not CATEGORY-LEVEL; valid: {valid}")
    try:
        category = taxonomy.category(head)
    except ValueError:
        raise ValueError(f"unknown taxonomy category in {tid!r}; valid: {valid}") from None
    if not category.testable:
        raise ValueError(f"{category.title} cannot be tested: {category.reason}")
    if category.level(int(level)) is None:
        raise ValueError(f"{category.title} {level} is not defined by the method; valid: {valid}")
    return head, int(level)


def check_requested(classification: Classification, requested_id: str) -> None:
    """Refuse a level above what the answers allow (SPEC-NOTES §1)."""
    head, _, level = requested_id.rpartition("-")
    if head != classification.category or int(level) > classification.level:
        raise ValueError(f"{requested_id} is ruled out by the answers: "
                         f"{classification.explanation}")
