"""Packaging benchmarks: what a lab PC downloads and how long ``storwatt`` takes to start.

* bundle / .deb / .tar.gz sizes of ``make package``'s output in ``dist/``;
* start-up time of the frozen ``storwatt --version`` (median of 5 launches): the bootloader
  unpacks nothing (one-folder bundle) but imports Python, the CLI and every ``cmd_*`` module,
  which is what every command pays before doing work. Launches after the first find the files
  in the page cache, so this is the warm start a technician sees on the second command. The
  same command from the venv is measured alongside: on a shared machine their ratio is what
  freezing costs, whatever the load at the time.

If ``dist/storwatt`` is missing the bench builds it with ``packaging/linux/build.sh``; when
that cannot work (no PyInstaller, no dpkg-deb) it reports one row saying why instead.
Run: ``.venv/bin/python -m bench.run_all packaging``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figure import BenchResult  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
BUNDLE_EXE = DIST / "storwatt" / "storwatt"
VENV_EXE = ROOT / ".venv" / "bin" / "storwatt"
COMMAND = ".venv/bin/python -m bench.run_all packaging"
LAUNCHES = 5
START_GOAL_S = 2.0  # a CLI that takes longer than this feels broken when typed by hand
MIB = 1024 * 1024


def _missing_tools() -> str | None:
    try:
        import PyInstaller  # noqa: F401
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


def start_seconds(exe: Path, launches: int = LAUNCHES) -> list[float]:
    """Wall time of each ``exe --version`` launch, in a private data folder."""
    times = []
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "STORWATT_DATA_DIR": data, "QT_QPA_PLATFORM": "offscreen"}
        for _ in range(launches):
            started = time.perf_counter()
            subprocess.run([str(exe), "--version"], env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
    return times


def run() -> list[BenchResult]:
    reason = ensure_bundle()
    if reason:
        return [BenchResult("packaging (bundle size, start-up) not measured", float("nan"), "",
                            f"skipped: {reason}", None, COMMAND)]
    rows = [BenchResult("bundle size on disk (dist/storwatt, one folder)",
                        round(folder_mib(BUNDLE_EXE.parent), 1), "MiB", "informative", None,
                        COMMAND)]
    for name, pattern in (("download size of the .deb", "storwatt_*.deb"),
                          ("download size of the .tar.gz", "storwatt-*-linux-*.tar.gz")):
        for path in sorted(DIST.glob(pattern))[-1:]:
            rows.append(BenchResult(name, round(path.stat().st_size / MIB, 1), "MiB",
                                    "informative", None, COMMAND))
    times = start_seconds(BUNDLE_EXE)
    median = statistics.median(times)
    # Same command from the development venv, measured alongside: on a shared machine the
    # ratio shows what freezing costs independently of the load at the time.
    source = statistics.median(start_seconds(VENV_EXE)) if VENV_EXE.exists() else float("nan")
    rows += [
        BenchResult(f"bundle start-up: storwatt --version (median of {LAUNCHES})",
                    round(median, 3), "s", f"≤ {START_GOAL_S} s", median <= START_GOAL_S,
                    COMMAND),
        BenchResult(f"bundle start-up: first of the {LAUNCHES} launches", round(times[0], 3),
                    "s", "informative", None, COMMAND),
        BenchResult(f"venv start-up: storwatt --version (median of {LAUNCHES})",
                    round(source, 3), "s", "reference", None, COMMAND),
        BenchResult("bundle / venv start-up ratio", round(median / source, 2), "",
                    "informative", None, COMMAND),
    ]
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name}: {row.value} {row.unit} (goal {row.goal})")
