"""Crash drills for ``storwatt run --resume`` (issue 15, "Resume after a crash"): a simulated
run is SIGKILLed, the next ``run --resume`` continues it in its own record from the phase
boundary the method allows, and its report carries every metric under the NON-COMPLIANT
banner "resumed after interruption"; what cannot be resumed is refused with the reason."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.records import PhaseStatus, RunStatus
from app.storage.opening import open_database
from tests.support.processes import read_until
from tests.support.time_budget import budget_s
from app.storage.repository import load_run
ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "resources" / "methods" / "smoke.toml"
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
              pytest.mark.slow]

#: smoke with a ready idle long enough to be killed in (6 s) on a loaded machine
DRILL_METHOD = f'''base = "{SMOKE}"
name = "resume-drill"
compliant = false
description = "smoke with a 6 s ready idle, for the resume crash drill"

[[plans]]
name = "online"
categories = ["online", "near-online"]
prefill = true
prefill_block_kib = 256
prefill_max_intervals = 1
conditioning_profile = "MW1"
conditioning_intervals = 0
ready_idle_intervals = 6
com_check_intervals = 1
active = [
  {{ profile = "MW1", stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "MW2", stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "RW",  stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "RR",  stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "SW",  stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "SR",  stabilisation_intervals = 0, measurement_intervals = 2 }},
]

[[plans]]
name = "media-library"
categories = ["removable", "virtual"]
prefill = false
conditioning_profile = "SW"
conditioning_intervals = 0
ready_idle_intervals = 6
com_check_intervals = 1
active = [
  {{ profile = "SW", stabilisation_intervals = 0, measurement_intervals = 2 }},
  {{ profile = "SR", stabilisation_intervals = 0, measurement_intervals = 2 }},
]
'''
METRICS = ["EP_RI", "EP_MW1", "EP_MW2", "EP_RW", "EP_RR", "EP_SW", "EP_SR"]


class Station:
    """``storwatt`` in a subprocess on one database and data directory."""

    def __init__(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path / 'runs.db'}"
        self.out = tmp_path / "out"
        self.method = tmp_path / "resume-drill.toml"
        self.method.write_text(DRILL_METHOD, encoding="utf-8")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT),
                    "STORWATT_DATA_DIR": os.environ["STORWATT_DATA_DIR"]}
        self.cwd = tmp_path

    def argv(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "app.cli.main", "run", "--lab", "sim", "--db", self.url,
                *extra]

    def kill_in(self, phase: str, after_s: float) -> str:
        """Start a run, SIGKILL it ``after_s`` into ``phase``; returns the run id."""
        proc = subprocess.Popen(self.argv("--method", str(self.method), "--com",
                                          "deduplication"),
                                env=self.env, cwd=self.cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            seen = read_until(proc.stdout.fileno(), f"▶ {phase} ".encode(), timeout=budget_s(180))
            time.sleep(after_s)
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
        first = seen.decode().split()
        return first[first.index("Run") + 1]  # "Run 1a2b3c4d  method …"

    def resume(self, run_id: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv("--resume", run_id, *extra), env=self.env, cwd=self.cwd,
                              capture_output=True, text=True, timeout=budget_s(300))

    def load(self, run_id: str):
        database = open_database(self.url)  # marks the killed run INTERRUPTED
        try:
            return load_run(database, run_id)
        finally:
            database.close()


@pytest.mark.realtime("a real station process SIGKILLed mid-run, then resumed")
def test_sigkill_in_ready_idle_then_resume_redoes_ready_idle_only(tmp_path: Path) -> None:
    station = Station(tmp_path)
    run_id = station.kill_in("Ready idle", after_s=1.5)
    before = station.load(run_id)
    assert before.status is RunStatus.INTERRUPTED
    assert before.phase(8).status is PhaseStatus.INTERRUPTED

    done = station.resume(run_id, "--out", str(station.out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Redone from its beginning: Ready idle\n" in done.stdout
    assert "Then run: COM deduplication" in done.stdout
    assert "▶ MW1" not in done.stdout and "▶ Ready idle" in done.stdout
    assert "NOT MET  Resumed after interruption" in done.stdout

    after = station.load(run_id)
    assert after.status is RunStatus.COMPLETED
    redone = {p.info.name for p in after.phases if p.attempts > 1}
    assert redone == {"Ready idle"}
    for m in before.metrics:  # the completed phases' results, kept as stored
        assert after.metric(m.name) == m
    invalid = [(name, m and m.reason) for name in METRICS
               if (m := after.metric(name)) is None or not m.valid]
    assert not invalid, invalid
    assert not after.compliance.compliant
    pdf = next(station.out.glob("*.pdf"))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout if shutil.which("pdftotext") else ""
    if text:
        assert "resumed after interruption" in text
        for name in METRICS:
            assert name in text

    refused = station.resume(run_id)  # now COMPLETED: nothing to resume
    assert refused.returncode == 1
    assert f"run {run_id[:8]} is COMPLETED, not INTERRUPTED" in refused.stderr


@pytest.mark.realtime("a real station process SIGKILLed mid-run, then resumed")
def test_sigkill_in_the_active_sequence_restarts_it_at_its_first_profile(
        tmp_path: Path) -> None:
    station = Station(tmp_path)
    run_id = station.kill_in("RW", after_s=1.0)
    assert station.load(run_id).status is RunStatus.INTERRUPTED

    listed = subprocess.run([sys.executable, "-m", "app.cli.main", "runs", "list", "--db",
                             station.url], env=station.env, capture_output=True, text=True,
                            timeout=budget_s(120))
    row = next(line for line in listed.stdout.splitlines() if line.startswith(run_id[:8]))
    assert "INTERRUPTED, resumable" in row

    changed = station.resume(run_id, "--capacity-gb", "100")
    assert changed.returncode == 1
    assert "sut.raw_capacity_bytes: the run has 7300000000000, given 100000000000" in \
        changed.stderr
    station.method.write_text(DRILL_METHOD.replace("for the resume", "edited, for the resume"),
                              encoding="utf-8")
    edited = station.resume(run_id)
    assert edited.returncode == 1 and "differs from the method the run used" in edited.stderr
    station.method.write_text(DRILL_METHOD, encoding="utf-8")

    done = station.resume(run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Redone from its beginning: MW1, MW2, RW" in done.stdout
    started = [line.split("▶ ")[1].split(" (")[0] for line in done.stdout.splitlines()
               if "▶ " in line]
    assert started[0] == "MW1" and "Intensity search" not in started
    after = station.load(run_id)
    assert after.status is RunStatus.COMPLETED
    assert {p.info.name: p.attempts for p in after.phases if p.attempts > 1} == {
        "MW1": 2, "MW2": 2, "RW": 2}
    assert all(after.metric(name) is not None for name in METRICS)
    assert "resumed after interruption" in after.compliance.banner()
