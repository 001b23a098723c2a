"""The run view's instrument strip (issue 28): a meter that stops answering is visible in its
first second — its reading ages on a timer of the strip's own, turns amber once older than
1.5 sample periods and red with its failure count when the sampler logs gaps — instead of a
station that looks frozen for the 20 s silence limit."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage.synthetic import outside, run_started
from drivers.interfaces import InstrumentIdentity, PowerSample, TemperatureSample
from ui.run.instrument_strip import InstrumentStrip
from ui.run.view import RunView


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


IDENTIFIED = ev.InstrumentsIdentified(InstrumentIdentity("YOKOGAWA", "WT310E", "C2QM1"),
                                      InstrumentIdentity("Ext", "TH-1"), "simulated SUT")


def power(t: float, watts: float) -> ev.PowerSamples:
    return ev.PowerSamples(0, (PowerSample(t, watts),), outside(1))


def test_a_silent_meter_ages_turns_amber_then_red_with_its_reconnects(qtbot) -> None:
    clock = Clock()
    strip = InstrumentStrip(clock=clock)
    qtbot.addWidget(strip)
    strip.start(run_started(0.0), sample_period_s=1.0, temperature_period_s=5.0)
    strip.ingest([IDENTIFIED, power(1.0, 652.25),
                  ev.TemperatureSamples(0, (TemperatureSample(1.0, 22.04),), outside(1))])
    assert strip.texts()["power"] == "Power meter WT310E: 652.2 W · 0.0 s ago"
    assert strip.texts()["temperature"].startswith("Thermometer TH-1: 22.0 °C")
    clock.now += 0.6
    strip.refresh()  # the strip's own timer: no event needed for the age to move
    assert "0.6 s ago" in strip.texts()["power"] and "silent" not in strip.texts()["power"]
    clock.now += 1.0  # 1.6 sample periods without a reading
    strip.refresh()
    assert strip.texts()["power"].endswith("· 1.6 s ago · silent")
    # the sequencer's own wording of a failed read and a failed reconnect (sequencer.py)
    strip.ingest([ev.LogMessage("WARNING", "sample gap 2.0–3.0 s: power meter: timed out "
                                "after 2.0 s", 3.0, 0),
                  ev.LogMessage("WARNING", "power meter: reconnect failed: refused (at 3.0 s)",
                                3.0, 0)])
    assert "NOT ANSWERING — reconnecting (2 failures)" in strip.texts()["power"]
    strip.ingest([ev.LogMessage("WARNING", "sample gap 3.0–4.0 s: power meter: sequencer 3 "
                                "period(s) behind", 4.0, 0)])  # the station late, not the meter
    assert "(2 failures)" in strip.texts()["power"]
    assert "reconnect failed" in strip.labels["power"].toolTip()
    assert "NOT ANSWERING" not in strip.texts()["temperature"]
    strip.ingest([power(4.0, 650.0)])  # back: fresh again
    assert strip.texts()["power"] == "Power meter WT310E: 650.0 W · 0.0 s ago"
    strip.ingest([ev.RunFinished(RunStatus.FAILED, 5.0, error="lost")])
    assert not strip.timer.isActive()
    assert strip.texts()["power"] == "Power meter WT310E: 650.0 W (last reading of the run)"


def test_the_run_view_shows_the_strip_from_the_first_event(qtbot, tmp_path) -> None:
    from dataclasses import replace

    from app.method.loader import load_method
    from app.method.record import resolved_method

    view = RunView(settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(view)
    started = replace(run_started(0.0), method_json=resolved_method(load_method("demo")))
    view.ingest([started, IDENTIFIED, power(0.5, 600.0)])
    assert view.instruments.isVisibleTo(view)
    assert "600.0 W" in view.instruments.texts()["power"]
    assert set(view.instruments.texts()) == {"power", "temperature"}
    view.clear()  # a new run forgets the last run's instruments
    assert view.instruments.texts() == {} and not view.instruments.isVisibleTo(view)


def test_a_lab_with_several_inputs_is_named_by_its_sum(qtbot) -> None:
    from dataclasses import replace

    from app.sequencer.power_inputs import InputIdentity

    strip = InstrumentStrip(clock=Clock())
    qtbot.addWidget(strip)
    strip.start(run_started(0.0), sample_period_s=1.0, temperature_period_s=5.0)
    inputs = tuple(InputIdentity(name, InstrumentIdentity("YOKOGAWA", "WT310"), None, "1P2W",
                                 "0.1 % rdg") for name in ("psu-a", "psu-b"))
    strip.ingest([replace(IDENTIFIED, power_inputs=inputs), power(1.0, 700.0)])
    assert strip.texts()["power"].startswith("Power, 2 inputs summed: 700.0 W")


def test_a_pause_is_no_silence_and_silence_counts_again_from_the_resume(qtbot) -> None:
    """Issue 41, seen 5: a pause showed both instruments amber "silent" (the readings stop on
    purpose) while the status bar said "running"."""
    clock = Clock()
    strip = InstrumentStrip(clock=clock)
    qtbot.addWidget(strip)
    strip.start(run_started(0.0), sample_period_s=1.0, temperature_period_s=5.0)
    strip.ingest([IDENTIFIED, power(1.0, 652.25)])
    strip.set_paused(True)
    clock.now += 600  # ten minutes paused
    strip.refresh()
    assert strip.texts()["power"] == "Power meter WT310E: 652.2 W (paused: not read until Resume)"
    assert "silent" not in strip.labels["power"].styleSheet() and \
        "#606060" in strip.labels["power"].styleSheet()
    strip.set_paused(False)
    clock.now += 0.5
    strip.refresh()
    assert strip.texts()["power"].endswith("· 0.5 s ago")  # counted from the resume
    clock.now += 1.2
    strip.refresh()
    assert strip.texts()["power"].endswith("· silent")  # a meter silent after it: amber again
