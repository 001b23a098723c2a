"""Terminal presentation of a running sequence: progress lines and the final metrics table.

A listener like any other: it only formats events, so the headless run shows exactly what the
GUI shows (phase, progress with ETA, interval figures, stability, metrics with validity).
"""

from __future__ import annotations

import math
import sys
from typing import ClassVar, TextIO

from app.rules.compliance import assess_method
from app.method.record import method_from_record
from app.metrics.formatting import format_duration, format_figure, format_metric_value
from app.core.records import MetricResult
from app.sequencer import events as ev
from app.sequencer.capacity_optimisation import not_valid_word
from app.sequencer.event_dispatch import EventTable


def _with_unit(value: float, unit: str) -> str:
    text = format_figure(value)
    return text if text == "—" else f"{text} {unit}"


def metrics_table(metrics: list[MetricResult] | tuple[MetricResult, ...]) -> str:
    rows = [f"{'Metric':<22} {'Value':>12} {'Unit':<9} {'Avg power':>11} {'Avg resp':>10}"
            "  Validity"]
    for m in metrics:
        watts = _with_unit(m.avg_power_w, "W")
        resp = _with_unit(m.avg_response_ms, "ms")
        validity = "VALID" if m.valid else f"{not_valid_word(m)}: {m.reason}"
        rows.append(f"{m.name:<22} {format_metric_value(m):>12} {m.unit:<9} {watts:>11} "
                    f"{resp:>10}  {validity}")
    return "\n".join(rows)


class ConsoleReporter:
    """Prints a readable log of the run; quiet mode prints phases and metrics only."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.out: TextIO | None = stream or sys.stdout
        self.quiet = quiet
        self._last_progress = -math.inf
        self.finished: ev.RunFinished | None = None

    _events: ClassVar[EventTable[None]] = EventTable("console")
    _events.ignore(ev.StabilisationExtended, ev.PowerSamples, ev.TemperatureSamples,
                   ev.WorkloadIntervals, ev.HostRates, ev.HistogramReady, ev.RangesApplied,
                   ev.RangePlanReady, ev.SteadyStateJudged,
                   why="plotted or tabled by the GUI and reports; the run log's lines say "
                       "what a terminal needs (an extension, a range change)")

    def __call__(self, event: ev.RunEvent) -> None:
        self._events.dispatch(event, self)

    def _print(self, text: str) -> None:
        """A terminal that went away (EIO after a hang-up, a closed pipe) ends the printing,
        never the run: the record is in storage, the console only shows it."""
        if self.out is None:
            return
        try:
            print(text, file=self.out, flush=True)
        except (OSError, ValueError):  # ValueError: the stream was closed
            self.out = None

    @_events.on
    def _on_run_started(self, e: ev.RunStarted) -> None:
        tag = ""
        if e.method_json:  # the method's numbers, derived (a synthetic stream has none)
            verdict = assess_method(method_from_record(e.method_json))
            tag = "" if verdict.compliant else f"  ** method numbers {verdict.short()} **"
        self._print(f"Run {e.run_id[:8]}  method {e.method_name} {e.method_version}{tag}")
        self._print(f"  taxonomy {e.config.taxonomy}, lab {e.config.lab}, "
                    f"{len(e.phases)} phases, planned {format_duration(e.planned_s)}")

    @_events.on
    def _on_run_resumed(self, e: ev.RunResumed) -> None:
        self._on_run_started(e.started)
        r = e.resumption
        self._print(f"  RESUMED (resumption {r.number}) at {format_duration(r.t)} from phase "
                    f"{e.started.phases[r.restart_phase].name}: NON-COMPLIANT, resumed after "
                    "interruption")

    @_events.on
    def _on_instruments_identified(self, e: ev.InstrumentsIdentified) -> None:
        thermo = e.temperature_meter.describe() if e.temperature_meter else "none"
        self._print(f"  power meter: {e.power_meter.describe()} ({e.power_meter.resource})")
        self._print(f"  thermometer: {thermo}; workload engine: {e.workload_engine}")

    @_events.on
    def _on_phase_started(self, e: ev.PhaseStarted) -> None:
        self._print(f"[{format_duration(e.t):>12}] ▶ {e.phase.name} "
                    f"(planned {format_duration(e.phase.planned_s)})")

    @_events.on
    def _on_phase_finished(self, e: ev.PhaseFinished) -> None:
        err = f": {e.error}" if e.error else ""
        self._print(f"[{format_duration(e.t):>12}] ■ {e.phase.name} {e.status}{err}")

    @_events.on
    def _on_interval_closed(self, e: ev.IntervalClosed) -> None:
        if self.quiet:
            return
        iv = e.interval
        ops = f"{format_figure(iv.ops_rate):>10} {iv.ops_unit:<5}" if iv.ops_unit else " " * 16
        stab = {True: "stable", False: "NOT stable", None: ""}[iv.stable]
        ep = (f"EP {format_figure(iv.ep):>8}  WMA {format_figure(iv.wma):>8}" if iv.ep == iv.ep
              else "")
        self._print(f"    interval {iv.index + 1:3d}  {format_figure(iv.avg_power_w):>8} W  "
                    f"{ops} {ep} {stab}")

    @_events.on
    def _on_search_result(self, e: ev.SearchResult) -> None:
        if not e.searched:  # an unsearched profile's pre-run (method-notes §2)
            self._print(f"    null-engine pre-run of {e.profile} ({e.pre_run_basis}): "
                        + (e.note or "the load generator kept up"))
            return
        self._print(f"    intensity 100 for {e.profile}: queue depth {e.queue_depth} → "
                    f"{format_figure(e.ops_rate)} {e.ops_unit} at "
                    f"{format_figure(e.avg_response_ms)} ms"
                    + (f" ({e.note})" if e.note else ""))

    @_events.on
    def _on_metric_computed(self, e: ev.MetricComputed) -> None:
        m = e.metric
        state = "VALID" if m.valid else f"{not_valid_word(m)} ({m.reason})"
        self._print(f"    {m.name} = {format_metric_value(m)} {m.unit}  {state}")

    @_events.on
    def _on_progress(self, e: ev.Progress) -> None:
        if self.quiet or e.elapsed_s - self._last_progress < 10:
            return
        self._last_progress = e.elapsed_s
        self._print(f"    progress {e.fraction * 100:5.1f} %  elapsed "
                    f"{format_duration(e.elapsed_s)}  ETA {format_duration(e.eta_s)}")

    @_events.on
    def _on_log_message(self, e: ev.LogMessage) -> None:
        """One line per message: a traceback stays in the stored log (``runs show``)."""
        if e.level != "INFO" or not self.quiet:
            first, *rest = e.message.splitlines() or [""]
            more = f"  (+{len(rest)} lines in the run's stored log)" if rest else ""
            self._print(f"    {e.level}: {first}{more}")

    @_events.on
    def _on_teardown_failed(self, e: ev.TeardownFailed) -> None:
        """Always printed, also in quiet mode: the next run may find the piece still busy."""
        self._print(f"[{format_duration(e.t):>12}] WARNING: {e.describe()}")

    @_events.on
    def _on_run_finished(self, e: ev.RunFinished) -> None:
        # not printed yet: the final status is shown once the run is durable (print_final)
        self.finished = e

    def print_final(self, where: str) -> None:
        """The final status line, once the caller knows ``where`` the run is stored."""
        e = self.finished
        status = f"{e.status}" + (f" — {e.error}" if e.error else "") if e else "not reported"
        self._print(f"Run finished: {status}; {where}")
