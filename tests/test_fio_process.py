"""How a fio process is started (drivers/fio/process.py): the parent-death signal armed without
a ``preexec_fn`` where ``setpriv`` can (a ``preexec_fn`` makes CPython fork the interpreter with
the GIL held and stalled the meter polls, issue 27), the pid, group and argv still fio's own,
and a station already dead before the signal was armed never leaves the program running.
A stand-in program reports what it got; the real fio and a SIGKILLed station are in
tests/test_fio_engine.py (``test_a_crashed_station_leaves_no_orphan_fio``)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drivers.fio import process
from drivers.fio.process import FioProcess

pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")]

#: util-linux setpriv where it offers --pdeathsig (the test's own look, not the module's)
SETPRIV = shutil.which("setpriv")
HAS_PDEATHSIG = bool(SETPRIV) and "--pdeathsig" in subprocess.run(
    [SETPRIV or "setpriv", "--help"], capture_output=True, text=True, check=False).stdout
needs_setpriv = pytest.mark.skipif(not HAS_PDEATHSIG, reason="no setpriv with --pdeathsig")

#: reports its pid, process group, argv and parent-death signal (prctl PR_GET_PDEATHSIG = 2)
REPORT = """
import ctypes, json, os, sys
sig = ctypes.c_int(0)
ctypes.CDLL("libc.so.6").prctl(2, ctypes.byref(sig))
print(json.dumps({"pid": os.getpid(), "pgid": os.getpgid(0), "argv": sys.argv[1:],
                  "pdeathsig": sig.value}), flush=True)
"""


def _started(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[FioProcess, dict]:
    """``argv`` started as the engine starts fio, with the keywords Popen was given."""
    given: dict = {}
    real = subprocess.Popen

    def spy(args, **kwargs):
        given.update(kwargs, args=args)
        return real(args, **kwargs)

    monkeypatch.setattr(process.subprocess, "Popen", spy)
    proc = FioProcess(argv, time.monotonic)
    proc.proc.wait(10)
    for reader in proc._readers:
        reader.join(5)
    return proc, given


@needs_setpriv
def test_the_death_signal_is_armed_without_a_preexec_fn_when_setpriv_can(
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [sys.executable, "-c", REPORT, "--output-format=json+", "a b"]
    proc, given = _started(monkeypatch, argv)
    assert given["preexec_fn"] is None  # CPython's vfork path: the interpreter is not forked
    assert given["args"][0] == SETPRIV
    report = _reported(proc)
    assert report["pdeathsig"] == signal.SIGTERM  # fio ends its workers on SIGTERM, not KILL
    assert report["pid"] == report["pgid"] == proc.pid  # exec'd in place: killpg reaches it
    assert report["argv"] == argv[3:] and proc.argv == argv  # words passed on, none split
    assert proc.returncode == 0


def _reported(proc: FioProcess) -> dict:
    """The stand-in's one JSON line, as the document splitter took it from stdout."""
    docs = proc.drain()
    assert len(docs) == 1, (docs, proc.stderr_text())
    return docs[0][1]


def test_without_setpriv_the_preexec_fn_arms_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "pdeathsig_setpriv", lambda: None)
    proc, given = _started(monkeypatch, [sys.executable, "-c", REPORT])
    assert given["preexec_fn"] is not None and given["args"][0] == sys.executable
    report = _reported(proc)
    assert report["pdeathsig"] == signal.SIGTERM and report["pid"] == proc.pid


@needs_setpriv
def test_a_station_dead_before_the_signal_was_armed_leaves_nothing_running(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The guard's check: had the station died between the spawn and ``setpriv``'s prctl, its
    child would be another process's (the guard sees a parent that is not the station)."""
    marker = tmp_path / "ran"
    monkeypatch.setattr(process.os, "getpid", lambda: 1)  # "the station" is not our parent
    proc, _ = _started(monkeypatch, ["touch", str(marker)])
    assert proc.returncode == 1 and not marker.exists()


def test_a_missing_program_is_refused_as_popen_refuses_it() -> None:
    with pytest.raises(FileNotFoundError):
        FioProcess(["/nonexistent/fio", "--version"], time.monotonic)
