"""Taxonomy: derive a SUT's classification (e.g. Online 3) from its attributes, with reasons.

method-notes §1: the classification is the highest level whose required attributes are all met;
the technician may not pick a level the answers rule out, and the station shows why each
higher level is ruled out. The requirement tables are data (``taxonomy-*.toml``, named by the
method's ``taxonomy_file``), loaded and validated here into immutable objects, so a lab that
receives a new taxonomy edits a file, not code.
"""

from __future__ import annotations

import operator
import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.method.loader import (MAX_METHOD_BYTES, MethodError, describe_validation_error,
                               load_method)
from app.method.model import Method
from app.method.taxonomy_terms import DEFAULT_METHOD, NEEDS
from app.core.paths import methods_dir
from drivers import guarded_file

Connectivity = Literal["not-specified", "host", "network"]
#: connectivity is ordered: a network-connected product is also connected to hosts
CONNECTIVITY_RANK = {name: rank for rank, name in enumerate(get_args(Connectivity))}
Comparator = Literal[">=", ">", "<=", "=="]
COMPARATORS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "==": operator.eq}


class TaxonomyError(ValueError):
    """A taxonomy id or a set of answers the method cannot test; the message says why and
    what would be valid."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LevelRequirements(_Frozen):
    """One column of a seed taxonomy table: what a level requires (None = optional)."""

    level: int = Field(ge=1)
    connectivity: Connectivity | None = None
    consumer_component: bool | None = None
    integrated_controller: bool | None = None
    storage_protection: bool | None = None
    no_spof: bool | None = None
    non_disruptive_service: bool | None = None
    fba_ckd: bool | None = None
    robotics: bool | None = None
    #: maximum configuration (drive count) the product supports: (comparison, drives)
    max_config: tuple[Comparator, int] | None = None

    def requirement_texts(self) -> list[str]:
        """Every requirement in words, for listings ('network connectivity', …)."""
        texts = []
        if self.connectivity and self.connectivity != "not-specified":
            texts.append(f"{self.connectivity} connectivity")
        for attr, (yes_text, no_text) in NEEDS.items():
            wanted = getattr(self, attr)
            if wanted is not None:
                texts.append(yes_text if wanted else no_text)
        if self.max_config:
            texts.append(f"maximum configuration {self.max_config[0]} {self.max_config[1]} drives")
        return texts


class Category(_Frozen):
    """A market segment (Online, Near Online …); untestable ones carry the reason."""

    id: str = Field(pattern=r"^[a-z][a-z-]*[a-z]$")
    title: str
    #: how the seed names its levels ("Removable 3"); the title when empty
    short_title: str = ""
    testable: bool
    reason: str = ""
    access_pattern: str = ""
    max_ttfd: str = ""
    user_accessible_data: Literal["required", "prohibited"] = "required"
    levels: tuple[LevelRequirements, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> "Category":
        numbers = [lv.level for lv in self.levels]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"category {self.id}: a level is listed twice ({numbers})")
        if self.testable and not self.levels:
            raise ValueError(f"category {self.id}: a testable category needs levels")
        if not self.testable and (self.levels or not self.reason):
            raise ValueError(f"category {self.id}: an untestable category has no levels "
                             f"and must give its reason")
        return self

    def level(self, n: int) -> LevelRequirements | None:
        return next((lv for lv in self.levels if lv.level == n), None)

    def level_label(self, n: int) -> str:
        """'Online 3', 'Removable 5' — the seed's names for classifications."""
        return f"{self.short_title or self.title} {n}"


class Taxonomy(_Frozen):
    name: str
    #: (level, name) pairs: 1 Consumer/Component … 6 Mainframe
    level_names: tuple[tuple[int, str], ...]
    categories: tuple[Category, ...]

    @field_validator("level_names", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        """TOML writes a table {1 = "…"}; kept as sorted pairs so the model stays immutable."""
        if isinstance(value, dict):
            return tuple(sorted((int(k), v) for k, v in value.items()))
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "Taxonomy":
        ids = [c.id for c in self.categories]
        if len(set(ids)) != len(ids):
            raise ValueError(f"a category id is listed twice ({ids})")
        named = {n for n, _ in self.level_names}
        for c in self.categories:
            unnamed = [lv.level for lv in c.levels if lv.level not in named]
            if unnamed:
                raise ValueError(f"category {c.id}: levels {unnamed} have no entry in level_names")
        return self

    def levels(self) -> tuple[int, ...]:
        return tuple(n for n, _ in self.level_names)

    def level_name(self, n: int) -> str:
        return dict(self.level_names).get(n, "")

    def category(self, cid: str) -> Category:
        for c in self.categories:
            if c.id == cid:
                return c
        raise TaxonomyError(f"unknown taxonomy category {cid!r}; categories: "
                            f"{', '.join(c.id for c in self.categories)}")

    def valid_ids(self) -> list[str]:
        """Every testable ``category-level`` id ("online-1" … "virtual-6")."""
        return [f"{c.id}-{lv.level}" for c in self.categories if c.testable for lv in c.levels]


@dataclass(frozen=True)
class SutAttributes:
    """The wizard's answers about the product (method-notes §1 attribute list).

    The defaults describe the smallest product (a consumer/component device with one drive and
    no robotics) so unanswered questions classify as level 1 of every category."""

    category: str
    connectivity: Connectivity = "not-specified"
    consumer_component: bool = True
    integrated_controller: bool = False
    storage_protection: bool = False
    no_spof: bool = False
    non_disruptive_service: bool = False
    fba_ckd: bool = False
    max_drive_count: int = 1
    robotics: bool = False

    def __post_init__(self) -> None:
        if self.connectivity not in CONNECTIVITY_RANK:
            raise TaxonomyError(f"connectivity {self.connectivity!r} is not one of "
                                f"{', '.join(CONNECTIVITY_RANK)}")
        if isinstance(self.max_drive_count, bool) or not isinstance(self.max_drive_count, int) \
                or self.max_drive_count < 0:
            raise TaxonomyError(f"max_drive_count must be a whole number ≥ 0, "
                                f"got {self.max_drive_count!r}")
        for f in fields(self):
            if f.name in NEEDS and not isinstance(getattr(self, f.name), bool):
                raise TaxonomyError(f"{f.name} must be yes/no, got {getattr(self, f.name)!r}")


class RuledOut(NamedTuple):
    """A level the answers rule out and why; ``str()`` is the reason alone."""

    level: int
    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Classification:
    category: str
    level: int
    id: str  # "online-3"
    label: str  # "Online 3"
    ruled_out: tuple[RuledOut, ...]  # the higher levels and why not, highest first
    #: every level whose requirements the answers meet (a technician may request any of them)
    eligible: tuple[int, ...] = ()
    #: every level the answers do not reach, lower ones included, with the reason
    refused: tuple[RuledOut, ...] = ()

    @property
    def explanation(self) -> str:
        lines = [f"Classified as {self.label}."]
        lines += [f"Level {r.level} ruled out: {r.reason}" for r in self.ruled_out]
        return "\n".join(lines)

    @property
    def one_line(self) -> str:
        """The explanation as one line for a record field (``Classified as Online 2; level 3
        ruled out: …``): the lines joined, not a full stop before a semicolon (issue 41:
        "Online 2.;")."""
        return "; ".join([f"Classified as {self.label}"]
                         + [f"level {r.level} ruled out: {r.reason}" for r in self.ruled_out])


@lru_cache(maxsize=None)
def load_taxonomy_file(path: Path) -> Taxonomy:
    try:
        data = tomllib.loads(guarded_file.read_text(path, "taxonomy file", MAX_METHOD_BYTES))
    except guarded_file.GuardedFileError as exc:
        raise MethodError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise MethodError(f"{path}: not valid TOML: {exc}") from None
    try:
        return Taxonomy.model_validate(data)
    except ValidationError as exc:
        raise MethodError(f"{path}: invalid taxonomy:\n{describe_validation_error(exc)}") from None


def load_taxonomy(method: Method | None = None, directory: Path | None = None) -> Taxonomy:
    """The taxonomy the method names (``taxonomy_file``, beside the method files); without a
    method, that of :data:`DEFAULT_METHOD`."""
    method = method or load_method(DEFAULT_METHOD, directory)
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


def _testable(taxonomy: Taxonomy, cid: str) -> Category:
    category = taxonomy.category(cid)
    if not category.testable:
        raise TaxonomyError(f"{category.title} cannot be tested: {category.reason}; "
                            f"valid: {', '.join(taxonomy.valid_ids())}")
    return category


def _verdict(category: Category, n: int, answers: SutAttributes) -> str | None:
    """Why level n is out of reach, or None when the answers meet it."""
    req = category.level(n)
    if req is None:
        return f"{category.level_label(n)} is not defined by the method"
    missing = unmet(req, answers)
    return f"{category.level_label(n)} needs " + ", ".join(missing) if missing else None


def classify(taxonomy: Taxonomy, answers: SutAttributes) -> Classification:
    """Highest level whose requirements all hold, with the reason for every level above it."""
    category = _testable(taxonomy, answers.category)
    verdicts = {n: _verdict(category, n, answers) for n in taxonomy.levels()}
    eligible = tuple(n for n, why in verdicts.items() if why is None)
    refused = tuple(RuledOut(n, why) for n, why in sorted(verdicts.items(), reverse=True)
                    if why is not None)
    if not eligible:
        raise TaxonomyError(f"the answers meet no {category.title} level:\n"
                            + "\n".join(r.reason for r in refused))
    level = max(eligible)
    return Classification(category.id, level, f"{category.id}-{level}",
                          category.level_label(level),
                          tuple(r for r in refused if r.level > level), eligible, refused)


def parse_taxonomy_id(taxonomy: Taxonomy, tid: str) -> tuple[str, int]:
    """``"online-3"`` → ("online", 3), or a TaxonomyError listing the valid ids."""
    head, _, level = tid.rpartition("-")
    valid = ", ".join(taxonomy.valid_ids())
    if not level.isdigit() or not head:
        raise TaxonomyError(f"taxonomy {tid!r} is not CATEGORY-LEVEL; valid: {valid}")
    try:
        category = _testable(taxonomy, head)
    except TaxonomyError as exc:
        if "cannot be tested" in str(exc):
            raise
        raise TaxonomyError(f"unknown taxonomy category in {tid!r}; valid: {valid}") from None
    if category.level(int(level)) is None:
        raise TaxonomyError(f"taxonomy {tid!r}: {category.level_label(int(level))} is not "
                            f"defined by the method; valid: {valid}")
    return head, int(level)


def allowed(classification: Classification, requested_id: str) -> tuple[str, int]:
    """The requested ``category-level`` if the answers meet its requirements; a TaxonomyError
    naming what rules it out otherwise (method-notes §1: no level the answers rule out)."""
    head, _, level = requested_id.rpartition("-")
    if head != classification.category:
        raise TaxonomyError(f"{requested_id} is ruled out: the answers are for category "
                            f"{classification.category} ({classification.label})")
    if not level.isdigit():
        raise TaxonomyError(f"taxonomy {requested_id!r} is not CATEGORY-LEVEL")
    if int(level) in classification.eligible:
        return head, int(level)
    why = dict(classification.refused).get(int(level), f"level {level} is not defined")
    raise TaxonomyError(f"{requested_id} is ruled out by the answers: {why} "
                        f"(derived: {classification.label})")



def recorded_classification(method: Method, taxonomy_id: str,
                            answers: dict[str, Any]) -> Classification:
    """The classification ``answers`` (a run's recorded :class:`SutAttributes` fields, as the
    wizard and ``storwatt run`` store them) derive for ``taxonomy_id``'s category, checked to
    allow ``taxonomy_id``; a TaxonomyError says why not (no answers, a hand-chosen level, a
    level the answers rule out)."""
    if not answers:
        raise TaxonomyError(f"no classification answers recorded: {taxonomy_id or '(none)'} "
                            "was not derived from the SUT's attributes")
    known = {f.name for f in fields(SutAttributes)} - {"category"}
    if not set(answers) & known:
        raise TaxonomyError(f"{taxonomy_id} was chosen by hand ({', '.join(sorted(answers))}), "
                            "not derived from the SUT's attributes")
    head, _, level = taxonomy_id.rpartition("-")
    attributes = SutAttributes(category=head if level.isdigit() else taxonomy_id,
                               **{k: v for k, v in answers.items() if k in known})
    result = classify(load_taxonomy(method), attributes)
    allowed(result, taxonomy_id)
    return result
