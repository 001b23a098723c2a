"""The live instrument strip of the run view: each instrument's last reading and how old it is.

Why: a meter that stops answering blocks the sequencer until the silence limit (20 s by
default) fails the phase, and in that time the header still said Running and the elapsed time
stood still — the station looked frozen. The strip ages each instrument's last reading on a
GUI timer of its own, so a silent meter turns amber within a second and shows its reconnect
attempts as the sampler logs them, long before the run fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.sequencer import events as ev
from app.sequencer.event_dispatch import EventTable

#: a reading older than this many sample periods is called silent (amber)
SILENT_PERIODS = 1.5
TICK_MS = 250
COLOURS = {"fresh": "#287a46", "silent": "#b06a00", "lost": "#b03030", "idle": "#606060"}
#: how the sampler names its instruments in its log lines (app/sequencer/sequencer.py)
SAMPLER_NAMES = {"power": "power meter", "temperature": "thermometer"}
NOT_A_FAILURE = ("period(s) behind", "reconnected to")


@dataclass
class InstrumentState:
    """What the strip knows of one instrument (mutable: it follows the run)."""

    label: str
    unit: str
    period_s: float
    value: float | None = None
    received: float | None = None  # the strip's clock when the last reading arrived
    failures: int = 0  # failed reads / reconnects logged since the last reading
    last_problem: str = ""
    #: the strip's clock when the run last resumed: silence is counted from there, a pause
    #: stops the readings on purpose
    resumed: float | None = None

    def line(self, now: float, running: bool, paused: bool = False) -> tuple[str, str]:
        """(text, colour key) for this instrument at ``now``."""
        if self.received is None:
            return f"{self.label}: no reading yet", "idle"
        reading = ("—" if self.value is None or self.value != self.value
                   else f"{self.value:,.1f} {self.unit}")
        if not running:  # the run has ended: an age frozen at its end would mislead
            return f"{self.label}: {reading} (last reading of the run)", "idle"
        if paused:  # not read while paused: no silence, nothing amber (issue 41)
            return f"{self.label}: {reading} (paused: not read until Resume)", "idle"
        age = now - max(self.received, self.resumed or self.received)
        text = f"{self.label}: {reading} · {age:.1f} s ago"
        if self.failures:
            return (f"{text} · NOT ANSWERING — reconnecting ({self.failures} "
                    f"{'failure' if self.failures == 1 else 'failures'})", "lost")
        if age > max(self.period_s * SILENT_PERIODS, 1.0):
            return f"{text} · silent", "silent"
        return text, "fresh"


class InstrumentStrip(QWidget):
    """One label per instrument, refreshed by events and by its own timer."""

    _events: ClassVar[EventTable[None]] = EventTable("instrument strip")
    _events.ignore(ev.RunStarted, ev.RunResumed,
                   why="the run view calls start with the method's sample periods")
    _events.ignore(ev.PhaseStarted, ev.StabilisationExtended, ev.PhaseFinished,
                   ev.WorkloadIntervals, ev.HostRates, ev.IntervalClosed, ev.HistogramReady,
                   ev.SearchResult, ev.RangesApplied, ev.RangePlanReady, ev.MetricComputed,
                   ev.Progress, ev.TeardownFailed, ev.SteadyStateJudged,
                   why="not a reading or a failure of a meter while the run lasts; the event "
                       "log shows them")

    def __init__(self, parent: QWidget | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.clock = clock
        self._batch_now = 0.0  # the clock when the batch being ingested arrived
        self.running = False
        self.paused = False
        self.states: dict[str, InstrumentState] = {}
        self.labels: dict[str, QLabel] = {}
        self._temperature_period_s = 0.0
        self._layout = QVBoxLayout(self)  # one line each, in the timeline's column
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.setAccessibleName("Instruments")
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.refresh)

    def reset(self) -> None:
        for label in self.labels.values():
            self._layout.removeWidget(label)
            label.deleteLater()
        self.states.clear()
        self.labels.clear()
        self.running = self.paused = False
        self.timer.stop()
        self.hide()

    def start(self, started: ev.RunStarted, sample_period_s: float,
              temperature_period_s: float) -> None:
        """A run began: its power meter now, its thermometer once the lab names one."""
        self.reset()
        self._temperature_period_s = temperature_period_s
        self._add("power", f"Power meter {started.config.power_meter.driver}", "W",
                  sample_period_s)
        self.running = True
        self.show()
        self.timer.start()
        self.refresh()

    def _add(self, key: str, label: str, unit: str, period_s: float) -> None:
        self.states[key] = InstrumentState(label, unit, period_s)
        widget = QLabel()
        widget.setWordWrap(True)
        widget.setAccessibleName(label)
        self._layout.addWidget(widget)
        self.labels[key] = widget

    @_events.on
    def identified(self, e: ev.InstrumentsIdentified) -> None:
        """The instruments' own names, once the lab has asked them (*IDN?)."""
        if "power" in self.states:  # several inputs: their sum (each is in the log)
            self.states["power"].label = (
                f"Power, {len(e.power_inputs)} inputs summed" if e.power_inputs
                else f"Power meter {e.power_meter.model or ''}".strip())
        if e.temperature_meter is not None and "temperature" not in self.states:
            self._add("temperature", f"Thermometer {e.temperature_meter.model or ''}".strip(),
                      "°C", self._temperature_period_s)
        self.refresh()

    def ingest(self, batch: Iterable[ev.RunEvent]) -> None:
        self._batch_now = self.clock()  # one reading time for the whole batch
        for event in batch:
            self._events.dispatch(event, self)
        self.refresh()

    @_events.on
    def _on_power(self, e: ev.PowerSamples) -> None:
        if e.samples:
            self._reading("power", e.samples[-1].watts, self._batch_now)

    @_events.on
    def _on_temperature(self, e: ev.TemperatureSamples) -> None:
        if e.samples:
            self._reading("temperature", e.samples[-1].celsius, self._batch_now)

    @_events.on
    def _on_log(self, e: ev.LogMessage) -> None:
        if e.level != "INFO":
            self._problem(e.message)

    def set_paused(self, paused: bool) -> None:
        """The run is paused (its readings stop on purpose) or resumed (silence counts from
        now, not from the last reading before the pause)."""
        self.paused = paused
        if not paused:
            now = self.clock()
            for state in self.states.values():
                state.resumed = now
        self.refresh()

    @_events.on
    def _on_finished(self, _e: ev.RunFinished) -> None:
        self.running = False
        self.timer.stop()

    def _reading(self, key: str, value: float, now: float) -> None:
        state = self.states.get(key)
        if state is not None:
            state.value, state.received, state.failures = value, now, 0

    def _problem(self, message: str) -> None:
        """A sampler's gap or failed reconnect ("sample gap …: power meter: …")."""
        for key, name in SAMPLER_NAMES.items():
            state = self.states.get(key)
            if state is None or f"{name}: " not in message:
                continue
            # the sampler's own lateness ("sequencer 3 period(s) behind") and a successful
            # reconnect are not the instrument failing
            if not any(word in message for word in NOT_A_FAILURE):
                state.failures += 1
                state.last_problem = message

    def refresh(self) -> None:
        now = self.clock()
        for key, state in self.states.items():
            text, tone = state.line(now, self.running, self.paused)
            label = self.labels[key]
            label.setText(text)
            label.setToolTip(state.last_problem)
            style = (f"color: {COLOURS[tone]}; font-weight: "
                     f"{'bold' if tone in ('silent', 'lost') else 'normal'};")
            if label.styleSheet() != style:  # a style sheet re-polishes the label: ~2 ms
                label.setStyleSheet(style)

    def texts(self) -> dict[str, str]:
        """What each instrument's label says (tests read this, never pixels)."""
        return {key: label.text() for key, label in self.labels.items()}
