"""Result bundles of recorded runs, their verification, and tampered copies (issue 29).

A tampered copy has one file edited and, like a careful forger's, the manifest's SHA-256 of
that file rewritten to match, so only the verifier's own recomputation can catch it."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from app.reports.export import write_bundle
from app.storage.db import Database
from app.storage.repository import load_run
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "verifier" / "storwatt_verify.py"


def bundle_of(database: Database, run_id: str, path: Path) -> Path:
    return write_bundle(load_run(database, run_id), path)


def verify(bundle: Path, *options: str, own_process: bool = False) -> tuple[int, str]:
    """The verifier's exit status and everything it printed for ``bundle``.

    In this process by default: the verifier is one file of the standard library only
    (``test_verifier_imports_the_standard_library_only`` holds it to that), so a test's bundle
    is checked without starting an interpreter (~0.3 s of CPU each, and the fast tier starts
    no process). With ``own_process`` as an auditor runs it: its own bare interpreter,
    ``-I -S`` (no site packages, no environment, not this repository on the path), as
    ``test_demo_bundle_verifies_in_a_bare_interpreter`` does (marked ``process``)."""
    if own_process:
        done = subprocess.run([sys.executable, "-I", "-S", str(VERIFIER), str(bundle), *options],
                              capture_output=True, text=True, timeout=budget_s(60),
                              cwd=bundle.parent)
        return done.returncode, done.stdout + done.stderr
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        try:
            status = verifier_module().main([str(bundle), *options])
        except SystemExit as exc:  # argparse's refusals
            status = exc.code if isinstance(exc.code, int) else 1
    return status, printed.getvalue()


def read_files(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def tampered(bundle: Path, out: Path, edits: dict[str, Callable[[bytes], bytes]],
             rewrite_manifest: bool = True) -> Path:
    """A copy of ``bundle`` with each named file passed through its edit; the manifest's
    hashes rewritten to match the edited files when ``rewrite_manifest``."""
    files = read_files(bundle)
    for name, edit in edits.items():
        before = files[name]
        files[name] = edit(before)
        assert files[name] != before, f"the edit of {name} changed nothing"
    if rewrite_manifest:
        manifest = json.loads(files["manifest.json"])
        for name in edits:
            manifest["files"][name] = hashlib.sha256(files[name]).hexdigest()
            if name in manifest.get("sizes", {}):  # storwatt-bundle/2 declares these too
                manifest["sizes"][name] = len(files[name])
            if name in manifest.get("rows", {}):
                from app.reports.bundle import _rows
                manifest["rows"][name] = _rows(name, files[name])
        files["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out


def verifier_module():
    """The verifier loaded in this process by its file (it is no package of the project), for
    tests that call one of its checks directly instead of starting an interpreter."""
    import importlib.util

    name = "storwatt_verify_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, VERIFIER)
    assert spec is not None and spec.loader is not None, VERIFIER
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def derived_compliance(files: dict[str, bytes]) -> tuple[int, str]:
    """The verifier's compliance checks alone (``check_compliance``) on a bundle's files:
    (criteria that disagree, the checklist printed)."""
    import io

    verifier = verifier_module()
    out = io.StringIO()
    manifest = json.loads(files["manifest.json"])
    bundle = verifier.Bundle(manifest, files, run=json.loads(files["run.json"]),
                             method=json.loads(files["method.json"]) or {},
                             phases=verifier._jsonl(files["phases.jsonl"]),
                             metrics=verifier._jsonl(files["metrics.jsonl"]))
    checklist = verifier.Checklist(out)
    verifier.check_compliance(bundle, checklist)
    return checklist.failed, out.getvalue()


def assert_verifies(run, path: Path) -> str:
    """Write ``run``'s bundle to ``path`` and check it as an auditor would: every figure and
    verdict the verifier re-derives must agree with the station's (issue 29, "two
    implementations keep each other honest"). Returns the checklist."""
    from app.reports.export import write_bundle

    status, out = verify(write_bundle(run, path))
    assert status == 0, out
    return out
