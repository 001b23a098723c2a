"""The one record every benchmark returns: a measured figure against its goal."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchResult:
    name: str
    value: float
    unit: str
    goal: str
    passed: bool | None
    command: str = ""
