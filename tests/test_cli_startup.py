"""``storwatt --version`` and ``--help`` answer without loading the heavy libraries.

Every command pays for what registering the parsers imports; the database, report, numeric,
method-model and Qt libraries load only in the commands that use them (issue 17, goal ≤ 0.5 s
in the venv: bench/bench_startup.py). Checked in a fresh interpreter, since this test process
has long imported them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.time_budget import budget_s

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
                            text=True, check=True, timeout=budget_s(120))
    report = json.loads(result.stdout.splitlines()[-1])
    return report["out"], report["loaded"]


@pytest.mark.process
@pytest.mark.parametrize("module", ["app.cli.main", "ui.cli"])
@pytest.mark.parametrize("argv", [["--version"], ["--help"]], ids=["version", "help"])
def test_version_and_help_import_nothing_heavy(module: str, argv: list[str]) -> None:
    out, loaded = loaded_by(module, argv)
    assert out.strip(), "the command printed nothing"
    assert loaded == [], f"{module} {' '.join(argv)} imported {loaded}"


@pytest.mark.process
def test_the_installed_command_lists_every_group() -> None:
    out, _ = loaded_by("ui.cli", ["--help"])
    for group in ("audit", "db", "gui", "instruments", "meter", "methods", "report", "run",
                  "runs", "sim", "taxonomy", "thermo"):
        assert f"    {group} " in out or f"    {group}\n" in out, group


@pytest.mark.process
def test_a_command_still_loads_what_it_needs() -> None:
    """The probe would also pass if it never reached a command: a real one must import."""
    _, loaded = loaded_by("app.cli.main", ["methods", "list", "--json"])
    assert "pydantic" in loaded


GUI_PROBE = """
import json, sys
from app.storage.opening import open_database
open_database({url!r}).close()  # an existing, up-to-date station database
for name in [m for m in sys.modules if m.startswith(("alembic", "mako"))]:
    del sys.modules[name]  # creating it needed alembic; opening it again must not
from ui.app import application
qt_app = application()
from ui.shell.main_window import MainWindow
window = MainWindow(db_url={url!r})
window.show()
qt_app.processEvents()
print(json.dumps(sorted({{"alembic", "reportlab", "xlsxwriter", "pyvisa"}} & set(sys.modules))))
"""


@pytest.mark.process
@pytest.mark.gui
def test_the_gui_paints_its_first_window_without_report_or_migration_libraries(
        tmp_path: Path) -> None:
    """History, wizard, reports and schema upgrades load when first used, not before the
    start page is on screen (goal ≤ 2 s to a painted window, bench/bench_startup.py)."""
    code = GUI_PROBE.format(url=f"sqlite:///{tmp_path / 'station.db'}")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "STORWATT_DATA_DIR": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=budget_s(120))
    assert result.returncode == 0, result.stderr[-500:]
    assert json.loads(result.stdout.splitlines()[-1]) == []
