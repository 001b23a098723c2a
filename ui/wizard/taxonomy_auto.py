"""Adapter from ``app.method.taxonomy`` (``load_taxonomy``, ``SutAttributes``, ``classify`` →
Classification with ``id``, ``label``, ``ruled_out``) to the questions the wizard shows.

The questions are read from ``SutAttributes`` itself (bool → check box, int → number,
Literal/Enum → choice), so a new attribute in the method's taxonomy appears in the wizard
without a GUI change. :func:`ui.wizard.taxonomy_view.current_taxonomy` falls back to the manual
choice if this adapter cannot make sense of the installed module.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import typing
from typing import Any

from ui.wizard.taxonomy_view import (UNTESTABLE, UNTESTABLE_REASON, CategoryChoice, Derived,
                                     Question)

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
    label = name.replace("_", " ").capitalize()
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


class AutomaticTaxonomy:
    automatic = True

    def __init__(self, module: Any) -> None:
        self.module = module
        self.taxonomy = module.load_taxonomy()
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
        return list(self._questions)

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
        params = inspect.signature(self.module.classify).parameters
        kwargs = {}
        for name in params:
            if name in ("taxonomy", "tax"):
                kwargs[name] = self.taxonomy
            elif name == "category":
                kwargs[name] = category
        positional = [attrs] if len(params) - len(kwargs) >= 1 else []
        result = self.module.classify(*positional, **kwargs)
        ruled = tuple(str(r) for r in getattr(result, "ruled_out", ()) or ())
        return Derived(str(result.id), str(result.label), ruled,
                       str(getattr(result, "reason", "") or ""))
