"""Fake-clock runs for the verdict tests (issue 22): the shipped method or a lab's file, on
stand-ins that identify as real, calibrated instruments, on a clean site or a bad one.

The readings are the simulated SUT's; only the identities (no simulator prefix, a calibration
date) and the site (inlet, supply voltage, frequency) change, so a verdict differs for the
reason a test names and no other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from app.method.loader import load_method
from app.method.model import Method
from app.core.records import RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.labs.simulated import simulated_sut
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.stored import StoredRun
from app.storage.writer import RunWriter
from drivers.clock import FakeClock
from drivers.interfaces import InstrumentIdentity
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from app.storage.repository import load_run

COMPLIANT = "emerald-block-v3"
#: the media-library plan: the shortest whole compliant sequence (SW, SR, 2 h ready idle)
MEDIA = "removable-1"
#: the classification answers that derive Removable 1 (recorded as the wizard records them)
REMOVABLE_1 = {"consumer_component": True, "robotics": False, "max_drive_count": 1}
Hook = Callable[[Sequencer, ev.RunEvent], None]


def real_identity(vendor: str, model: str, driver: str,
                  days_ago: int | None = 30) -> InstrumentIdentity:
    calibrated = "" if days_ago is None else (date.today() - timedelta(days=days_ago)).isoformat()
    return InstrumentIdentity(vendor, model, "C2X123", "F1.03", "TCPIP::10.0.0.5::INSTR", driver,
                              calibrated)


class FioNamedEngine(SimulatedWorkloadEngine):
    """The simulated SUT's engine under the name a real fio engine reports."""

    def check(self) -> str:
        return "fio 3.33 (local)"


def record(db_path: Path, *, method: str = COMPLIANT, taxonomy: str = MEDIA,
           thermometer: bool = True, site: dict[str, Any] | None = None,
           hook: Hook | None = None, answers: dict[str, Any] | None = None,
           declared: dict[str, Any] | None = None) -> StoredRun:
    """One stored run of ``method`` on real-identity stand-ins calibrated 30 days ago;
    ``site`` replaces the simulated SUT's inlet_c / volts / freq_hz, ``declared`` fields of
    the SUT description (supply, ashrae_class)."""
    clock = FakeClock(1000.0)
    config = RunConfig(method=method, taxonomy=taxonomy, lab="sim-direct", station="bench-7",
                       operator="R. Tester", classification_reason="test stand-in",
                       classification_answers=REMOVABLE_1 if answers is None else answers,
                       sut=SutDescription(**(declared or {})))
    sut = simulated_sut(config)
    if site:
        sut.spec = replace(sut.spec, **site)
    power = SimulatedPowerMeter(sut)
    power.identity = real_identity("YOKOGAWA", "WT310E", "wt300")
    temperature = None
    if thermometer:
        temperature = SimulatedThermometer(sut)
        temperature.identity = real_identity("Keysight", "DAQ970A", "daq970a")
    lab = Lab(power, FioNamedEngine(sut, clock), temperature, sut.used_capacity_bytes, 0.0,
              "stand-ins")
    database, sequencer, _ = run_stored(db_path, load_method(method), config, lab, clock, hook)
    return load_run(database, sequencer.run_id)


def run_stored(db_path: Path, method: Method, config: RunConfig, lab: Lab, clock: FakeClock,
               hook: Hook | None = None) -> tuple[Database, Sequencer, RunStatus]:
    """Run ``method`` with ``lab`` through the real sequencer and RunWriter into ``db_path``;
    ``hook`` sees every event with the sequencer (to pause, abort, change the SUT …)."""
    database = open_database(f"sqlite:///{db_path}")
    writer = RunWriter(database)
    holder: list[Sequencer] = []

    def call_hook(event: ev.RunEvent) -> None:
        if hook is not None:
            hook(holder[0], event)

    sequencer = Sequencer(method, config, lab, clock, [writer, call_hook])
    holder.append(sequencer)
    try:
        status = sequencer.run()
    finally:
        lab.close()
        writer.close()
    return database, sequencer, status


def pause_in(kind: Any, seconds: float) -> Hook:
    """Pause once, right after the first interval of the first phase of ``kind`` closes, for
    ``seconds`` of station time."""
    import threading

    done = threading.Event()

    def resume(seq: Sequencer) -> None:
        seq.station_clock.advance(seconds)
        seq.resume()

    def hook(seq: Sequencer, event: ev.RunEvent) -> None:
        if isinstance(event, ev.IntervalClosed) and not done.is_set() and \
                seq_phase_kind(seq, event) is kind:
            done.set()
            seq.pause()
            threading.Timer(0.05, resume, (seq,)).start()
    return hook


def seq_phase_kind(seq: Sequencer, event: ev.IntervalClosed) -> Any:
    return next((p.kind for p in seq.phases if p.index == event.interval.phase_index), None)


def pdf_pages(path: Path) -> list[str]:
    """Each page's text with runs of white space as one space."""
    import re

    from pypdf import PdfReader

    return [re.sub(r"\s+", " ", page.extract_text()) for page in PdfReader(path).pages]
