"""The verifier ships where users are (issue 37, "Shipped where users are").

The .deb, the tarball and the Windows installer are built from one PyInstaller spec; building
them is the ``package`` tier (tests/test_packaging_bundle.py runs the installed
``storwatt-verify``). Here, without PyInstaller, the spec, the Linux build script and the
Inno Setup script are read: the spec makes a ``storwatt-verify`` launcher on every platform
from the entry that runs the verifier's own ``main`` and carries the verifier's source; the
build script refuses a bundle without them and links ``/usr/bin/storwatt-verify``; the
installer installs the whole bundle folder and names the launcher. The entry itself is run
with ``--version``, which must name every bundle and record format the verifier reads."""

from __future__ import annotations

import ast
import contextlib
import io
import runpy
import sys
from pathlib import Path

import pytest

from tests.support.bundles import verifier_module

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "storwatt.spec"
ENTRY = ROOT / "packaging" / "entry" / "storwatt_verify.py"
BUILD = ROOT / "packaging" / "linux" / "build.sh"
ISS = ROOT / "packaging" / "windows" / "storwatt.iss"


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == name]


def test_the_spec_makes_a_storwatt_verify_launcher_on_every_platform() -> None:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    entries = next(ast.literal_eval(node.value) for node in tree.body
                   if isinstance(node, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "ENTRIES" for t in node.targets))
    assert "storwatt_verify" in entries and ENTRY.is_file()
    launchers = next(node for node in tree.body if isinstance(node, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == "launchers"
                             for t in node.targets))  # module level: not under `if WINDOWS`
    made = [tuple(ast.literal_eval(a) for a in call.args) for call in _calls(launchers,
                                                                            "executable")]
    assert ("storwatt_verify", "storwatt-verify") in made
    datas = next(node for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "datas" for t in node.targets))
    assert "(str(ROOT / 'verifier' / 'storwatt_verify.py'), 'verifier')" in ast.unparse(datas)


def test_the_entry_runs_the_verifiers_own_main_and_nothing_of_the_station() -> None:
    imports = [node for node in ast.walk(ast.parse(ENTRY.read_text(encoding="utf-8")))
               if isinstance(node, (ast.Import, ast.ImportFrom))]
    modules = {node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
               for node in imports}
    assert modules == {"sys", "verifier.storwatt_verify"}


def test_the_entrys_version_names_the_formats_the_verifier_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    verifier = verifier_module()
    monkeypatch.setattr(sys, "argv", ["storwatt-verify", "--version"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as done:
        runpy.run_path(str(ENTRY), run_name="__main__")
    assert done.value.code == 0
    text = printed.getvalue()
    assert text.startswith(f"storwatt-verify {verifier.VERIFIER_VERSION}:"), text
    for form in (*verifier.BUNDLE_FORMATS, *verifier.FLAG_TABLES):
        assert form in text, (form, text)


def test_the_linux_packages_carry_storwatt_verify() -> None:
    script = BUILD.read_text(encoding="utf-8")
    assert 'ln -s ../../opt/storwatt/storwatt-verify "$STAGE/usr/bin/storwatt-verify"' in script
    guard = ('[ -x "$BUNDLE/storwatt-verify" ] && '
             '[ -f "$BUNDLE/_internal/verifier/storwatt_verify.py" ]')
    assert guard in script
    # the tarball packs the whole bundle folder the guard checked
    assert script.index(guard) < script.index('-cf - storwatt |')


def test_the_windows_installer_installs_the_bundle_folder_with_storwatt_verify() -> None:
    iss = ISS.read_text(encoding="utf-8")
    assert 'Source: "{#SourceRoot}\\dist\\storwatt\\*"; DestDir: "{app}"' in iss
    assert "recursesubdirs" in iss and '{app}\\storwatt-verify.exe' in iss


def test_each_hash_option_names_where_the_report_prints_that_hash(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The PDF prints the record SHA-256 in every page's footer and the samples SHA-256 in its
    run summary (app/reports/pdf.py); the verifier's help and the bundle's doc say the same, so
    an auditor never hands one option the other's hash (issue 37, seen 6)."""
    pdf = (ROOT / "app" / "reports" / "pdf.py").read_text(encoding="utf-8")
    assert 'footer = f"Revision {current.number} — record SHA-256 {current.sha256}"' in pdf
    assert '("Samples SHA-256", run.samples_sha256)' in pdf
    with pytest.raises(SystemExit):
        verifier_module().main(["--help"])
    helps = " ".join(capsys.readouterr().out.split()).split("options:", 1)[1]
    record = helps[helps.index("--record-sha256 HASH"):helps.index("--samples-sha256 HASH")]
    samples = helps[helps.index("--samples-sha256 HASH"):helps.index("--version")]
    assert "footer" in record and "record SHA-256" in record
    assert "footer" not in samples and "run summary" in samples
    doc = " ".join((ROOT / "docs" / "export-format.md").read_text(encoding="utf-8").split())
    assert "--samples-sha256 HASH`, the one every report page prints" not in doc
    assert "no page footer prints it" in doc
