"""Start-up benchmarks: how long a technician waits for ``storwatt`` (issue 17).

* ``storwatt --version`` from the development venv (goal ≤ 0.5 s) and from the PyInstaller
  bundle in ``dist/`` (goal ≤ 1 s; skipped, and said so, when ``make package`` has not been
  run). In the venv the command is ``python -m ui.cli``, what the ``storwatt`` script runs,
  so the figure is this checkout's code even when the venv's script predates it. Every command pays
  this before doing its work: registering the parsers must not load
  SQLAlchemy, reportlab, numpy or Qt (tests/test_cli_startup.py).
* ``storwatt gui`` to its first painted window (goal ≤ 2 s): launched with
  ``--exit-after-first-paint``, which prints the wall time once Qt has painted and flushed the
  whole main window (``ui.app.FirstPaintExit``); the figure is that time minus the moment the
  bench started the process. On a private Xvfb display when Xvfb is installed (a real X
  server, as a technician's desktop), else on Qt's offscreen platform; the row says which.

Each launch is a new process (interpreter, imports, Qt all start from nothing) in a private
data and settings folder; the first GUI launch creates the station database there, the others
open it as a station does every day. The files are in the page cache after the first launch,
so the median of 5 is the start a technician sees on the second and later launches.
Run: ``.venv/bin/python -m bench.run_all startup``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
VENV_COMMAND = [sys.executable, "-m", "ui.cli"]  # = .venv/bin/storwatt
BUNDLE_EXE = ROOT / "dist" / "storwatt" / "storwatt"
COMMAND = ".venv/bin/python -m bench.run_all startup"
LAUNCHES = 5
VENV_VERSION_GOAL_S = 0.5
BUNDLE_VERSION_GOAL_S = 1.0
FIRST_PAINT_GOAL_S = 2.0
PAINT_MARK = "first paint at "


@contextmanager
def display() -> Iterator[dict[str, str]]:
    """Environment for the GUI: a private Xvfb server when there is one, else offscreen."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        yield {"QT_QPA_PLATFORM": "offscreen"}
        return
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write_fd), "-screen", "0",
                               "1600x1000x24", "-nolisten", "tcp"], pass_fds=(write_fd,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as ready:  # Xvfb writes its display number once it accepts
            number = ready.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        yield {"QT_QPA_PLATFORM": "xcb", "DISPLAY": f":{number}"}
    finally:
        server.terminate()
        server.wait(timeout=10)


def private_env(folder: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This checkout's code, a throw-away data and settings folder (no user file touched)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "STORWATT_DATA_DIR": folder,
            "XDG_CONFIG_HOME": folder, **(extra or {})}


def version_seconds(command: list[str]) -> list[float]:
    """Wall time of each launch of ``command`` (``storwatt --version``)."""
    times = []
    with tempfile.TemporaryDirectory() as folder:
        env = private_env(folder)
        for _ in range(LAUNCHES):
            started = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True, timeout=60)
            times.append(time.perf_counter() - started)
    return times


def first_paint_seconds(storwatt: list[str], screen: dict[str, str]) -> list[float]:
    """Seconds from starting ``storwatt gui`` to its first painted main window."""
    times = []
    with tempfile.TemporaryDirectory() as folder:
        env = private_env(folder, screen)
        command = [*storwatt, "gui", "--exit-after-first-paint",
                   "--db", f"sqlite:///{Path(folder) / 'station.db'}"]
        for _ in range(LAUNCHES):
            started = time.time()  # the child reports wall time: same clock
            result = subprocess.run(command, env=env, capture_output=True, text=True,
                                    timeout=120)
            if PAINT_MARK not in result.stdout:
                raise RuntimeError(f"storwatt gui exited {result.returncode} without painting: "
                                   f"{result.stderr.strip()[-300:]}")
            painted = float(result.stdout.split(PAINT_MARK, 1)[1].split()[0])
            times.append(painted - started)
    return times


def _median_row(name: str, times: list[float], goal_s: float | None) -> Figure:
    median = statistics.median(times)
    goal = f"≤ {goal_s:g} s" if goal_s is not None else "reference"
    return Figure(f"{name} (median of {LAUNCHES})", round(median, 3), "s", goal,
                  None if goal_s is None else median <= goal_s, COMMAND)


def measure(where: str, storwatt: list[str], version_goal_s: float,
            screen: dict[str, str], platform: str) -> list[Figure]:
    return [_median_row(f"{where}: storwatt --version", version_seconds([*storwatt, "--version"]),
                        version_goal_s),
            _median_row(f"{where}: storwatt gui to its first painted window ({platform})",
                        first_paint_seconds(storwatt, screen), FIRST_PAINT_GOAL_S)]


def run() -> list[Figure]:
    # start-up times scale with how busy the shared machine is: say how busy it was
    rows = [Figure("1-minute load average when the start-up bench began",
                   round(os.getloadavg()[0], 2), "", "informative", None, COMMAND),
            _median_row("Python alone: python -c pass (the floor)",
                        version_seconds([sys.executable, "-c", "pass"]), None)]
    with display() as screen:
        platform = "Xvfb" if screen["QT_QPA_PLATFORM"] == "xcb" else "offscreen"
        rows += measure("venv", VENV_COMMAND, VENV_VERSION_GOAL_S, screen, platform)
        if BUNDLE_EXE.exists():
            rows += measure("bundle", [str(BUNDLE_EXE)], BUNDLE_VERSION_GOAL_S, screen, platform)
        else:
            rows.append(Figure("bundle start-up not measured: no dist/storwatt", float("nan"),
                               "s", "skipped: make package builds it", None, COMMAND))
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name}: {row.value} {row.unit} (goal {row.goal})")
