"""Contract: the domain core and the drivers never import Qt or the GUI (brief: ui → app → drivers)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_CORE = ("PySide6", "pyqtgraph", "ui", "shiboken6")
FORBIDDEN_IN_DRIVERS = FORBIDDEN_IN_CORE + ("app", "sqlalchemy", "alembic")


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package,forbidden", [("app", FORBIDDEN_IN_CORE),
                                               ("drivers", FORBIDDEN_IN_DRIVERS)])
def test_layer_never_imports_upwards(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_roots(p) & set(forbidden))
        for p in python_files(package)
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"layering violated: {offenders}"


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from PySide6.QtCore import QObject\nimport ui.main\n")
    assert {"PySide6", "ui"} <= imported_roots(bad)
