"""Adapter from ``app.method.taxonomy`` (``load_taxonomy``, ``SutAttributes``, ``classify`` →
Classification with ``id``, ``label``, ``ruled_out``) to the questions the wizard shows.

The questions are read from ``SutAttributes`` itself (bool → check box, int → number,
Literal/Enum → choice), so a new attribute in the method's taxonomy appears in the wizard
without a GUI change. :func:`current_taxonomy` falls back to the manual choice if this adapter
cannot make sense of the installed module.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import typing
from typing import Any

from app.method import taxonomy as taxonomy_rules
from app.method.loader import all_methods
from ui.wizard.taxonomy_view import (UNTESTABLE, UNTESTABLE_REASON, CategoryChoice, Derived,
                                     ManualTaxonomy, Question)

_SKIP = {"category"}  # asked by the category box itself


def _fields(cls: type) -> list[tuple[str, Any, Any]]:
    """(name, type, default) of a dataclass or pydantic model."""
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        out = []
        for f in dataclasses.fields(cls):
            default = None if f.default is dataclasses.MISSING else f.default
            out.append((f.name, hints.get(f.name, f.type), default))
        return out
    model_fields = getattr(cls, "model_fields", None)
    if model_fields is not None:
        return [(n, hints.get(n, f.annotation), None if f.is_required() else f.default)
                for n, f in model_fields.items()]
    raise TypeError(f"{cls!r} is neither a dataclass nor a pydantic model")


def _question(name: str, kind: Any, default: Any) -> Question:
    label = _LABELS.get(name) or name.replace("_", " ").capitalize()
    origin = typing.get_origin(kind)
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if origin is typing.Union and len(args) == 1:  # Optional[X]
        kind, origin, args = args[0], typing.get_origin(args[0]), list(typing.get_args(args[0]))
    if kind is bool:
        return Question(name, label, "bool", (), bool(default))
    if kind is int:
        return Question(name, label, "int", (), int(default or 0))
    if origin is typing.Literal:
        choices = tuple(str(a) for a in args)
        return Question(name, label, "choice", choices, str(default) if default else choices[0])
    if inspect.isclass(kind) and issubclass(kind, enum.Enum):
        choices = tuple(str(m.value) for m in kind)
        value = default.value if isinstance(default, enum.Enum) else default
        return Question(name, label, "choice", choices, str(value) if value else choices[0])
    raise TypeError(f"attribute {name}: cannot ask a {kind!r}")


#: level-requirement keys that are answered through a differently named attribute
_REQUIREMENT_ATTRIBUTE = {"max_config": "max_drive_count"}
_LABELS = {"connectivity": "Connectivity", "consumer_component": "Consumer/component product",
           "integrated_controller": "Integrated storage controller",
           "storage_protection": "Storage protection (RAID, mirroring …)",
           "no_spof": "No single point of failure",
           "non_disruptive_service": "Non-disruptive serviceability",
           "fba_ckd": "FBA/CKD support", "max_drive_count": "Maximum configuration (drives)",
           "robotics": "Robotics"}


def _load(module: Any, method: Any) -> Any:
    """``load_taxonomy(method)`` (the taxonomy file a method names), or without arguments."""
    params = inspect.signature(module.load_taxonomy).parameters
    return module.load_taxonomy(method) if params else module.load_taxonomy()


def _reason_text(item: Any) -> str:
    """A ruled-out entry: ``(level, why)`` pairs or plain text."""
    if isinstance(item, tuple) and len(item) == 2:
        return str(item[1])
    return str(item)


class AutomaticTaxonomy:
    automatic = True

    def __init__(self, module: Any, method: Any = None) -> None:
        self.module = module
        self.taxonomy = _load(module, method)
        self.attributes_type = module.SutAttributes
        self._fields = {n: (t, d) for n, t, d in _fields(self.attributes_type)}
        self._questions = [_question(n, t, d) for n, (t, d) in self._fields.items()
                           if n not in _SKIP]

    def categories(self) -> list[CategoryChoice]:
        choices = []
        for c in getattr(self.taxonomy, "categories", ()):
            cid = getattr(c, "id", None) or str(c)
            label = getattr(c, "title", None) or getattr(c, "name", None) or cid
            testable = bool(getattr(c, "testable", cid not in UNTESTABLE))
            reason = getattr(c, "reason", "") or ("" if testable else UNTESTABLE_REASON)
            choices.append(CategoryChoice(cid, str(label), testable, str(reason)))
        known = {c.id for c in choices}
        choices += [CategoryChoice(k, v, False, UNTESTABLE_REASON)
                    for k, v in UNTESTABLE.items() if k not in known]
        return choices

    def questions(self, category: str) -> list[Question]:
        """The attributes some level of this category requires (all of them if the taxonomy
        does not say), so a Removable library is never asked about FBA/CKD."""
        relevant = self._relevant(category)
        return [q for q in self._questions if not relevant or q.name in relevant]

    def _relevant(self, category: str) -> set[str]:
        found = next((c for c in getattr(self.taxonomy, "categories", ())
                      if getattr(c, "id", None) == category), None)
        names: set[str] = set()
        for level in getattr(found, "levels", ()) or ():
            data = level.model_dump() if hasattr(level, "model_dump") else vars(level)
            names |= {_REQUIREMENT_ATTRIBUTE.get(k, k) for k, v in data.items()
                      if v is not None and k != "level"}
        return names & set(self._fields)

    def _attributes(self, category: str, answers: dict[str, Any]) -> Any:
        values: dict[str, Any] = {}
        for name, (kind, _default) in self._fields.items():
            if name == "category":
                values[name] = category
            elif name in answers:
                value = answers[name]
                if inspect.isclass(kind) and issubclass(kind, enum.Enum):
                    value = kind(value) if not isinstance(value, str) or value in {
                        str(m.value) for m in kind} else value
                values[name] = value
        return self.attributes_type(**values)

    def derive(self, category: str, answers: dict[str, Any]) -> Derived:
        attrs = self._attributes(category, answers)
        kwargs: dict[str, Any] = {}
        for name in inspect.signature(self.module.classify).parameters:
            if name in ("taxonomy", "tax"):
                kwargs[name] = self.taxonomy
            elif name == "category":
                kwargs[name] = category
            elif attrs is not None:
                kwargs[name], attrs = attrs, None  # the first other parameter: the answers
        result = self.module.classify(**kwargs)
        ruled = tuple(_reason_text(r) for r in getattr(result, "ruled_out", ()) or ())
        return Derived(str(result.id), str(result.label), ruled,
                       str(getattr(result, "reason", "") or ""))


def reference_method():
    """The method whose taxonomy file the wizard asks about: the compliant one when installed
    (abbreviated variants inherit its taxonomy)."""
    methods = all_methods()
    compliant = [m for m in methods.values() if m.compliant]
    return (compliant or list(methods.values()) or [None])[0]


def current_taxonomy():
    """The automatic classification when the taxonomy module (``taxonomy_rules``, replaced by
    test doubles) can be driven (checked by deriving once), else the manual choice — the
    wizard must open either way."""
    try:
        auto = AutomaticTaxonomy(taxonomy_rules, reference_method())
        first = next(c for c in auto.categories() if c.testable)
        auto.derive(first.id, {q.name: q.default for q in auto.questions(first.id)})
    except Exception as exc:  # noqa: BLE001 — any mismatch falls back, with the reason shown
        return ManualTaxonomy(f"automatic classification unavailable: {exc}")
    return auto
