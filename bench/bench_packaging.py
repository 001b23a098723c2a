"""Packaging benchmarks: what a lab PC downloads.

* bundle / .deb / .tar.gz sizes of ``make package``'s output in ``dist/``.

How long the bundle and the venv take to start is bench/bench_startup.py's (it runs after this
one in ``make bench``, so on the bundle built here).

If ``dist/storwatt`` is missing the bench builds it with ``packaging/linux/build.sh``; when
that cannot work (no PyInstaller, no dpkg-deb) it reports one row saying why instead.
Run: ``.venv/bin/python -m bench.run_all packaging``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figure import BenchResult

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
BUNDLE_EXE = DIST / "storwatt" / "storwatt"
COMMAND = ".venv/bin/python -m bench.run_all packaging"
MIB = 1024 * 1024


def _missing_tools() -> str | None:
    try:
        import PyInstaller  # noqa: F401 - is it installed?
    except ImportError:
        return "PyInstaller is not installed (pip install -e '.[package]')"
    missing = [t for t in ("dpkg-deb", "objdump") if shutil.which(t) is None]
    return f"missing tools: {', '.join(missing)}" if missing else None


def ensure_bundle() -> str | None:
    """Build ``dist/`` when absent; returns why it cannot be measured, or None."""
    if BUNDLE_EXE.exists():
        return None
    reason = _missing_tools()
    if reason:
        return reason
    env = {**os.environ, "PY": sys.executable, "DIST": str(DIST)}
    result = subprocess.run([str(ROOT / "packaging" / "linux" / "build.sh")], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        return f"build.sh failed: {result.stderr.strip()[-300:]}"
    return None


def folder_mib(folder: Path) -> float:
    files = (p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return sum(p.stat().st_size for p in files) / MIB


def run() -> list[BenchResult]:
    reason = ensure_bundle()
    if reason:
        return [BenchResult("packaging (bundle size) not measured", float("nan"), "",
                            f"skipped: {reason}", None, COMMAND)]
    rows = [BenchResult("bundle size on disk (dist/storwatt, one folder)",
                        round(folder_mib(BUNDLE_EXE.parent), 1), "MiB", "informative", None,
                        COMMAND)]
    for name, pattern in (("download size of the .deb", "storwatt_*.deb"),
                          ("download size of the .tar.gz", "storwatt-*-linux-*.tar.gz")):
        for path in sorted(DIST.glob(pattern))[-1:]:
            rows.append(BenchResult(name, round(path.stat().st_size / MIB, 1), "MiB",
                                    "informative", None, COMMAND))
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name}: {row.value} {row.unit} (goal {row.goal})")
