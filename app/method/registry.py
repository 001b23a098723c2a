"""The registry of compliant methods this release (and every earlier one) shipped.

A method file's name is only a name: a lab's copy called ``emerald-block-v3`` version
``3.0.0-sw1`` with a 60 s response-time limit looked like the shipped method everywhere. The
registry pins, for every compliant method ever shipped, its name, version and the SHA-256 of
its normative content (:mod:`app.method.normative`); the content itself lives beside it in
``resources/methods/registry/<name>@<version>.json`` so a run is judged against the entry **of
the version it recorded**, never a newer release's. Any other method is a variant of the entry
it is closest to, and each normative key it changes is a deviation unless it is stricter.

Versioning rule (docs/method.md): a new default is a MINOR version, a removed or renamed key or
a changed normative value a MAJOR one; an entry once shipped is never edited, and the loader
refuses a method whose name and version are registered but whose normative content differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.method.model import Method
from app.method.normative import Difference, differences, normative_content, normative_sha256
from app.core.paths import methods_dir

#: (name, version, SHA-256 of the normative content) of every compliant method shipped;
#: append only (tests/test_method_registry.py pins this list)
REGISTERED: tuple[tuple[str, str, str], ...] = (
    ("emerald-block-v3", "3.0.0-sw1",
     "4295d9f697d7f7a712db394a676dbbf30facf70ebde4f70ffdfbce71e6172817"),
    ("emerald-hotband-v3", "3.0.0-sw1-hotband1",
     "662f50f7cfcde1003bb5213da6a63b2ce9b86afd4adcda8408f44a7452320ff9"),
)


class RegistryError(ValueError):
    """A registry entry's stored content does not match its pinned SHA-256."""


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    version: str
    sha256: str
    content: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def registry_dir():
    return methods_dir() / "registry"


def entry_file_name(name: str, version: str) -> str:
    return f"{name}@{version}.json"


@lru_cache(maxsize=1)
def registry() -> tuple[RegistryEntry, ...]:
    """Every registered entry with its normative content, each checked against its pin."""
    entries = []
    for name, version, sha in REGISTERED:
        path = registry_dir() / entry_file_name(name, version)
        content = json.loads(path.read_text(encoding="utf-8"))["normative"]
        if normative_sha256(content) != sha:
            raise RegistryError(f"{path}: normative content has SHA-256 "
                                f"{normative_sha256(content)}, the registry pins {sha}")
        entries.append(RegistryEntry(name, version, sha, content))
    return tuple(entries)


def registered(name: str, version: str) -> RegistryEntry | None:
    return next((e for e in registry() if (e.name, e.version) == (name, version)), None)


@dataclass(frozen=True)
class MethodIdentity:
    """What a method is, for every view: its name, version, normative SHA-256 and whether it
    is a registered compliant method or a variant of one (and how many keys differ)."""

    name: str
    version: str
    normative_sha256: str
    entry: RegistryEntry | None
    differences: tuple[Difference, ...]

    @property
    def registered(self) -> bool:
        return (self.entry is not None and not self.differences
                and (self.entry.name, self.entry.version) == (self.name, self.version))

    @property
    def deviations(self) -> tuple[Difference, ...]:
        """The differences a compliant run may not have (not merely stricter)."""
        return tuple(d for d in self.differences if not d.allowed)

    def relation(self) -> str:
        """``registered compliant method`` or ``variant of emerald-block-v3 3.0.0-sw1: 2 keys
        differ (1 deviation)``."""
        if self.entry is None:
            return "no registered compliant method to compare with"
        if self.registered:
            return "registered compliant method"
        n, bad = len(self.differences), len(self.deviations)
        text = f"variant of {self.entry.label}: {n} {'key differs' if n == 1 else 'keys differ'}"
        if n and not bad:
            return text + " (no deviation)"
        return text + (f" ({bad} {'deviation' if bad == 1 else 'deviations'})" if bad else "")

    def line(self) -> str:
        return (f"{self.name} {self.version} · normative SHA-256 {self.normative_sha256} · "
                f"{self.relation()}")


def identify(method: Method) -> MethodIdentity:
    """``method`` against the registry entry of its own name and version, or else (a variant,
    a renamed copy) the entry it differs least from."""
    content = normative_content(method)
    sha = normative_sha256(content)
    own = registered(method.name, method.version)
    if own is not None:
        return MethodIdentity(method.name, method.version, sha, own,
                              tuple(differences(own.content, content)))
    named = [e for e in registry() if e.name in (method.name, method.variant_of)]
    best = min(((e, differences(e.content, content)) for e in named or registry()),
               key=lambda found: len(found[1]), default=None)
    if best is None:
        return MethodIdentity(method.name, method.version, sha, None, ())
    return MethodIdentity(method.name, method.version, sha, best[0], tuple(best[1]))


def registry_record(method: Method) -> dict[str, Any]:
    """The JSON of a new registry entry for ``method`` (written once, when it first ships)."""
    return {"name": method.name, "version": method.version,
            "normative": normative_content(method)}
