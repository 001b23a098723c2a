"""``storwatt --version`` and ``--help`` answer without loading the heavy libraries.

Every command pays for what registering the parsers imports; the database, report, numeric,
method-model and Qt libraries load only in the commands that use them (issue 17, goal ≤ 0.5 s
in the venv: bench/bench_startup.py). Checked in a fresh interpreter, since this test process
has long imported them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sqlalchemy", "alembic", "reportlab", "numpy", "pydantic", "xlsxwriter", "pyvisa",
         "psycopg", "PySide6", "pyqtgraph")
PROBE = """
import contextlib, io, json, sys
from {module} import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main({argv!r})
    except SystemExit:
        pass
print(json.dumps({{"out": out.getvalue(), "loaded": sorted(set({heavy!r}) & set(sys.modules))}}))
"""


def loaded_by(module: str, argv: list[str]) -> tuple[str, list[str]]:
    """(what the command printed, which heavy libraries it imported) in a fresh interpreter."""
    code = PROBE.format(module=module, argv=argv, heavy=HEAVY)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True, timeout=120)
    report = json.loads(result.stdout.splitlines()[-1])
    return report["out"], report["loaded"]


@pytest.mark.parametrize("module", ["app.cli.main", "ui.cli"])
@pytest.mark.parametrize("argv", [["--version"], ["--help"]], ids=["version", "help"])
def test_version_and_help_import_nothing_heavy(module: str, argv: list[str]) -> None:
    out, loaded = loaded_by(module, argv)
    assert out.strip(), "the command printed nothing"
    assert loaded == [], f"{module} {' '.join(argv)} imported {loaded}"


def test_the_installed_command_lists_every_group() -> None:
    out, _ = loaded_by("ui.cli", ["--help"])
    for group in ("audit", "db", "gui", "instruments", "meter", "methods", "report", "run",
                  "runs", "sim", "taxonomy", "thermo"):
        assert f"    {group} " in out or f"    {group}\n" in out, group


def test_a_command_still_loads_what_it_needs() -> None:
    """The probe would also pass if it never reached a command: a real one must import."""
    _, loaded = loaded_by("app.cli.main", ["methods", "list", "--json"])
    assert "pydantic" in loaded
