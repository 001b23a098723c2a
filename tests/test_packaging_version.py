"""Version strings the packages carry are derived from ``app.__version__`` correctly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import app

SCRIPT = Path(__file__).resolve().parent.parent / "packaging" / "version_info.py"
_spec = importlib.util.spec_from_file_location("packaging_version_info", SCRIPT)
version_info = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(version_info)


def test_app_version_is_read_from_the_source():
    assert version_info.app_version() == app.__version__


@pytest.mark.parametrize("version, numeric", [
    ("0.1.0", (0, 1, 0, 0)), ("2.10", (2, 10, 0, 0)), ("1.2.3rc1", (1, 2, 3, 0)),
    ("1.2.3+local.7", (1, 2, 3, 0)),
])
def test_windows_numeric_version(version, numeric):
    assert version_info.numeric_version(version) == numeric


def test_windows_numeric_version_rejects_what_a_resource_cannot_hold():
    with pytest.raises(ValueError, match="65535"):
        version_info.numeric_version("70000.0")
    with pytest.raises(ValueError, match="no numeric part"):
        version_info.numeric_version("dev")


@pytest.mark.process
def test_debian_version_sorts_prereleases_before_the_release():
    ordered = [version_info.debian_version(v) for v in ("1.0rc1", "1.0", "1.0.1")]
    assert ordered == ["1.0~rc1", "1.0", "1.0.1"]
    for older, newer in zip(ordered, ordered[1:]):
        assert subprocess.run(["dpkg", "--compare-versions", older, "lt", newer]).returncode == 0


@pytest.mark.process
def test_command_line_flavours():
    out = subprocess.run([sys.executable, str(SCRIPT), "numeric"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == ".".join(map(str, version_info.numeric_version(app.__version__)))


def test_the_windows_installer_undoes_its_path_entry_and_pins_the_fio_download():
    """Issue 28: uninstalling left the PATH entry; the optional fio.exe was downloaded from a
    hand-typed URL without a checksum. Inno Setup and a Windows runner are not here, so the
    scripts are read: the uninstall step rewrites PATH without the app folder, and the
    workflow refuses a fio zip without a matching SHA-256."""
    root = Path(__file__).resolve().parents[1]
    iss = (root / "packaging" / "windows" / "storwatt.iss").read_text(encoding="utf-8")
    uninstall = iss[iss.index("procedure CurUninstallStepChanged"):]
    assert "usUninstall" in uninstall and "WithoutPathEntry(Current, Folder)" in uninstall
    assert "RegWriteExpandStringValue(HKLM, EnvironmentKey, 'Path'" in uninstall
    workflow = (root / ".github" / "workflows" / "windows-installer.yml").read_text("utf-8")
    fetch = workflow[workflow.index("Fetch fio.exe"):workflow.index("Build the installer")]
    assert "Get-FileHash -Algorithm SHA256 fio.zip" in fetch
    assert fetch.index("FIO_SHA256 -notmatch") < fetch.index("Invoke-WebRequest")
    assert fetch.index("$got -ne") < fetch.index("Expand-Archive")
