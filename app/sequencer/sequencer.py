"""The phase sequencer: executes a method's phase plan against a lab.

Runs on one worker thread (``run()`` blocks); the GUI and CLI control it only through
``pause()``, ``resume()`` and ``abort()``, which set flags the loop checks — threads are never
killed. Everything the run produces is published as events (``app.sequencer.events``) to the
listeners, which store, print or plot it. Time comes from an injectable ``Clock`` so tests run a
multi-hour plan in milliseconds. The sequencer works on a :class:`RunClock` (the station clock
re-based to the run start), so every time it publishes is run-relative, stamped once here.

Pause semantics: the Emerald method requires each phase to be one uninterrupted sequence
(method-notes §2), so a pause stops the workload at once and, on resume, the current phase is
restarted from its beginning as a new *attempt*. Samples of the interrupted attempt stay
stored as evidence, tagged with their attempt; only the final attempt counts for the metric.
"""

from __future__ import annotations

import logging
import math
import threading
import traceback
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone
from typing import TypeVar

from app.sequencer.access_check import PATTERN_RATE_IOPS, pattern_departures
from app.sequencer.access_check import describe as describe_pattern
from app.method.model import IOProfile, Method
from app.metrics.formatting import format_figure
from app.metrics.steady_state import SteadyStateVerdict
from app.method.record import resolved_method
from app.core.records import (PAUSE_REASON, IntervalRecord, MetricResult, PhaseInfo, PhaseKind,
                              PhaseStatus, RunConfig, RunStatus)
from app.sequencer import events as ev
from app.sequencer.capacity_optimisation import (DATA_REDUCTION_COMS, com_result, not_valid_word,
                                                 observed)
from app.sequencer.com_data_set import COM_BLOCK_BYTES, data_set_evidence
from app.sequencer.conformance import SiteRules, derived_rate_problem
from app.sequencer.continuation import Continuation
from app.sequencer.failures import failure_reason
from app.sequencer.host_clocks import clock_verdict
from app.sequencer.equipment import Lab, TeardownFailure
from app.sequencer.plan import build_phases, latest_extension_s, search_profiles
from app.sequencer.probe_window import probe_figures
from app.sequencer.range_plan import IDLE_KEY, RangePlan
from app.sequencer.ranging import Ranger
from app.sequencer.recorder import PhaseRecorder
from app.sequencer.run_clock import RunClock
from app.sequencer.sampler import MeterLost, MeterSampler
from app.sequencer.search import (Kept, Probe, RateOf, choose_intensity, generator_note,
                                  next_refinement, probe_over_limit, recheck)
from app.sequencer.sweep import SweepSteps
from app.sequencer.switching import sampling_switch_interval
from app.sequencer.workload_control import WorkloadControl, control_blocks
from drivers.clock import Clock, MonotonicClock
from drivers.interfaces import (GeneratorCeiling, InstrumentError, LiveRates, MeasuredPattern,
                                WorkloadError, WorkloadInterval, WorkloadProfile)

T = TypeVar("T")
#: a multi-stream probe whose SUT ran less than this share of the asked rate is saturated
KEPT_UP_SHARE = 0.95
#: how long past its expected latency an interval of a real engine waits for a slice that
#: reaches its end before it closes with what has come (a stalled engine is the stall
#: watchdog's to fail; this only keeps a late status line from being left out)
WORKLOAD_HOLD_S = 10.0

_log = logging.getLogger(__name__)


class RunAborted(Exception):
    """The operator (or a closing window) asked the run to stop."""


class _Paused(Exception):
    """Internal: the current phase attempt was interrupted by a pause."""


class _Rechecked(Exception):
    """Internal: the intensity re-check failed; the profile restarts at a lower intensity."""


class Sequencer:
    def __init__(self, method: Method, config: RunConfig, lab: Lab,
                 clock: Clock | None = None, listeners: Iterable[ev.RunListener] = (),
                 run_id: str | None = None, continuation: Continuation | None = None,
                 range_plan: RangePlan | None = None) -> None:
        self.method = method
        self.config = config
        self.lab = lab
        self.station_clock = clock or MonotonicClock()
        self.clock = RunClock(self.station_clock, self.station_clock.now())
        self.listeners = list(listeners)
        self.run_id = run_id or uuid.uuid4().hex
        self.phases = build_phases(method, config)
        #: refuses (KeyError) a supply or ASHRAE class the method does not know, before any IO
        self.site = SiteRules.declared(method, config.sut)
        self.plan = method.plan_for(config.category)
        self._sweep = SweepSteps(method, self.plan, self.phases, config.sut.drive_count)
        #: the PTS steady-state verdict of the preconditioning rounds so far (method-notes §5)
        self._steady_verdict: SteadyStateVerdict | None = None
        self.status = RunStatus.RUNNING
        self.error = ""  # why the run did not complete (RunFinished.error)
        self.metrics: list[MetricResult] = []
        self.search: dict[str, ev.SearchResult] = {}
        self._abort = threading.Event()
        self._pause = threading.Event()
        self._wake = threading.Event()
        self._abort_reason = ""
        self._stop_status = RunStatus.ABORTED  # FAILED when stopped by :meth:`fail`
        self._done_s = 0.0  # planned seconds of finished phases (for progress)
        self._extension_s = 0.0  # stabilisation extensions of finished phases (§4)
        self._last_progress = -math.inf
        #: polled with every sample for lines to log (the session's storage stall watch)
        self._watches: list[Callable[[], list[tuple[str, str]]]] = []
        #: set when this run continues an INTERRUPTED one (app/station/resume.py): it then starts at
        #: the continuation's phase, with its attempts and the stored intensity search
        self.continuation = continuation
        self._first_phase = continuation.restart_phase if continuation else 0
        if continuation is not None:
            self.search = {r.profile: r for r in continuation.search}
            self._done_s = sum(p.planned_s for p in self.phases[:self._first_phase])
        silence = method.sampling.meter_silence_limit_s
        self._power = MeterSampler(lab.power_meter, method.sample_period_s, "power meter",
                                   silence, self._now)
        self._temp = (MeterSampler(lab.temperature_meter, method.temperature_period_s,
                                   "thermometer", silence, self._now)
                      if lab.temperature_meter else None)
        #: ranging pass, then fixed ranges per profile (method-notes §3); ``range_plan`` is
        #: one the range advisor found and the operator confirmed
        self._ranger = Ranger(method, self.plan, lab.ranged_meters(), self.publish, self.log,
                              lambda: self.clock.now(),
                              range_plan or (continuation.range_plan if continuation else None),
                              several_inputs=lab.power_inputs is not None)

    # --- control (any thread) ---------------------------------------------------------------
    def pause(self) -> None:
        self._pause.set()
        self._wake.set()

    def resume(self) -> None:
        self._pause.clear()
        self._wake.set()

    def abort(self, reason: str = "aborted by the operator") -> None:
        self._abort_reason = reason
        self._abort.set()
        self._wake.set()
        for sampler in (self._power, self._temp):
            if sampler:  # a meter read or reconnect in progress ends within a wait slice
                sampler.interrupt()

    def fail(self, reason: str) -> None:
        """Stop the run because it cannot go on (its storage was taken away): like
        :meth:`abort`, but the run and its running phase end FAILED with ``reason``."""
        self._stop_status = RunStatus.FAILED
        self.abort(reason)

    def add_watch(self, watch: Callable[[], list[tuple[str, str]]]) -> None:
        """Poll ``watch`` with every sample; each (level, message) it returns is logged in the
        run (console, run view, stored record). Something outside the run that the run must
        announce while it goes on — a data disk that stopped completing writes."""
        self._watches.append(watch)

    def _now(self) -> float:
        """Run time now (``run()`` replaces the run clock, so samplers ask through here)."""
        return self.clock.now()

    @property
    def paused(self) -> bool:
        return self._pause.is_set()

    @property
    def planned_s(self) -> float:
        return sum(p.planned_s for p in self.phases)

    # --- publication --------------------------------------------------------------------------
    def publish(self, event: ev.RunEvent) -> None:
        for listener in self.listeners:
            listener(event)

    def log(self, message: str, level: str = "INFO", phase: int | None = None) -> None:
        self.publish(self._log_event(message, level, phase))

    def _log_event(self, message: str, level: str, phase: int | None = None) -> ev.LogMessage:
        return ev.LogMessage(level, message, self.clock.now(), phase)

    def _publish_final(self, *events: ev.RunEvent) -> None:
        """The run's last events reach every listener even if one of them fails: a listener
        broken mid-run (a terminal closed by SIGHUP) must not keep the final status from
        storage."""
        for event in events:
            for listener in self.listeners:
                try:
                    listener(event)
                except Exception:  # noqa: BLE001 - the others must still get the event
                    _log.exception("run %s: a listener failed on %s", self.run_id,
                                   type(event).__name__)

    # --- run ------------------------------------------------------------------------------
    def run(self) -> RunStatus:
        """Execute the whole plan; returns the final status. Never raises for run failures:
        an unexpected error (a bug, not an instrument or workload failure) ends the run FAILED
        with its traceback in the run's log, so every run ends with a final status. The
        sampling thread gets the interpreter within a millisecond of its grid point while the
        run lasts (``app.sequencer.switching``)."""
        with sampling_switch_interval():
            return self._run()

    def _run(self) -> RunStatus:
        offset = self.continuation.offset_s() if self.continuation else 0.0
        self.clock = RunClock(self.station_clock, self.station_clock.now() - offset)
        started = ev.RunStarted(
            self.run_id, self.config, self.method.name, self.method.version,
            self.method.compliant, self.phases, self.clock.t0,
            datetime.now(timezone.utc).isoformat(timespec="seconds"), self.planned_s,
            resolved_method(self.method))
        self.publish(self.continuation.announce(started, self.clock.now())
                     if self.continuation else started)
        error = ""
        final: list[ev.RunEvent] = []
        try:
            self._open_instruments()
            for phase in self.phases[self._first_phase:]:
                self._run_phase(phase)
            self.status = RunStatus.COMPLETED
        except RunAborted:
            self.status, error = self._stop_status, self._abort_reason
        except (InstrumentError, WorkloadError) as exc:
            self.status, error = RunStatus.FAILED, str(exc)
            final.append(self._log_event(f"run failed: {exc}", "ERROR"))
        except Exception as exc:  # noqa: BLE001 - a bug must still end the run, stored
            self.status, error = RunStatus.FAILED, failure_reason(exc)
            final.append(self._log_event(f"run failed: {error}\n{traceback.format_exc()}",
                                         "ERROR"))
        finally:
            self._close_instruments()
        # the lab closes before the run's end is published: a tear-down failure is then one
        # of the run's events like any other, never a row added to a finished run (issue 39's
        # guard refuses those); a later close (the session's) finds nothing left to close
        final += [ev.TeardownFailed(f.component, f.error, self.clock.now())
                  for f in self.lab.close()]
        self.error = error
        final.append(ev.RunFinished(self.status, self.clock.now(), tuple(self.metrics), error))
        self._publish_final(*final)
        return self.status

    def _open_instruments(self) -> None:
        power_id = self.lab.power_meter.open()
        temp_id = self.lab.temperature_meter.open() if self.lab.temperature_meter else None
        self._power.recorded = power_id  # a reading of any other instrument is refused
        if self._temp:
            self._temp.recorded = temp_id
        engine = self.lab.engine.check()
        self.publish(ev.InstrumentsIdentified(power_id, temp_id, engine,
                                              self.lab.input_identities()))
        self.log(f"power meter: {power_id.describe()}; workload engine: {engine}")
        self._check_host_clocks()
        self._ranger.start()

    def _check_host_clocks(self) -> None:
        """Each load host's clock offset, in the run log (a WARNING beyond half a sample
        period: ``host_clocks``)."""
        if self.lab.host_clocks is None:
            return
        for clock in self.lab.host_clocks():
            level, message = clock_verdict(clock, self.method.sample_period_s)
            self.log(message, level)

    def _close_instruments(self) -> None:
        try:
            if self.lab.engine.running:
                self.lab.engine.stop()
        except Exception as exc:  # noqa: BLE001 - the run's outcome is decided already
            self.report_teardown((TeardownFailure("workload engine", failure_reason(exc)),))

    def report_teardown(self, failures: tuple[TeardownFailure, ...]) -> None:
        """Publish the lab's tear-down failures to every listener (stored, shown, printed),
        at run time now. The run closes its lab before it ends (:meth:`_run`); this reports
        what a close outside a run found (a session closed before its run started)."""
        self._publish_final(*(ev.TeardownFailed(f.component, f.error, self.clock.now())
                              for f in failures))

    # --- phases ---------------------------------------------------------------------------
    def _run_phase(self, phase: PhaseInfo) -> None:
        self._ranger.before_phase(phase)  # ranges change at profile boundaries only
        attempt = self.continuation.attempt(phase.index) if self.continuation else 1
        if (skipped := self._sweep.skip_reason(phase)) is not None:
            self.publish(ev.PhaseFinished(phase, PhaseStatus.SKIPPED, self.clock.now(),
                                          skipped, None, attempt))
            self._done_s += phase.planned_s
            return
        pre_run = (self._pre_run(phase) if phase.kind is PhaseKind.ACTIVE
                   and not self._sweep.owns(phase)
                   and phase.profile not in search_profiles(self.method, self.plan) else None)
        while True:
            recorder = self._new_recorder(phase, attempt)
            window_start, window_end = recorder.measurement_window()
            self.publish(ev.PhaseStarted(phase, recorder.t_start, attempt, window_start,
                                         window_end))
            try:
                self._execute(recorder)
                self._publish_phase_results(phase, recorder)
                break
            except _Paused:
                self._finish_phase(recorder, PhaseStatus.ABORTED, PAUSE_REASON)
                self._wait_for_resume()
                self.log(f"{phase.name} restarted from its beginning after a pause "
                         "(the method requires an uninterrupted phase)", "WARNING", phase.index)
                attempt += 1
            except _Rechecked as failed:
                self._finish_phase(recorder, PhaseStatus.ABORTED, str(failed))
                attempt += 1
            except RunAborted:
                self._finish_phase(recorder, PhaseStatus(self._stop_status.value),
                                   self._abort_reason)
                raise
            except Exception as exc:
                if self._abort.is_set():  # e.g. fio killed by the same SIGTERM as the station
                    self.log(f"{phase.name}: {failure_reason(exc)} after the stop request",
                             "WARNING", phase.index)
                    self._finish_phase(recorder, PhaseStatus(self._stop_status.value),
                                       self._abort_reason)
                    raise RunAborted(self._abort_reason) from exc
                self._finish_phase(recorder, PhaseStatus.FAILED, failure_reason(exc))
                raise
        self._finish_phase(recorder, PhaseStatus.COMPLETED, "", recorder.workload_result)
        if pre_run is not None:
            self._publish_pre_run(pre_run, phase)
        self._done_s += phase.planned_s + recorder.extension_s
        self._extension_s += recorder.extension_s

    def _finish_phase(self, recorder: PhaseRecorder, status: PhaseStatus, error: str,
                      workload=None) -> None:
        self.publish(ev.PhaseFinished(recorder.phase, status, self.clock.now(), error, workload,
                                      recorder.attempt))

    def _wait_for_resume(self) -> None:
        while self._pause.is_set():
            if self._abort.is_set():
                raise RunAborted(self._abort_reason)
            self._wake.wait(0.5)
            self._wake.clear()
        if self._abort.is_set():
            raise RunAborted(self._abort_reason)

    def _execute(self, recorder: PhaseRecorder) -> None:
        phase = recorder.phase
        if phase.kind is PhaseKind.SEARCH:
            self._search_phase(recorder)
        elif phase.kind is PhaseKind.RANGING:
            self._ranging_phase(recorder)
        elif phase.kind is PhaseKind.READY_IDLE:
            self._drive(recorder, None, phase.planned_s)
        else:
            if phase.kind is PhaseKind.COM_CHECK:
                recorder.capacity_before = self._capacity()
            self._drive(recorder, self._workload_for(phase), phase.planned_s or None)

    def _capacity(self) -> tuple[int, int] | None:
        probe = self.lab.capacity_probe
        return probe() if probe else None

    def _new_recorder(self, phase: PhaseInfo, attempt: int) -> PhaseRecorder:
        unit = ""
        if (phase.kind in (PhaseKind.ACTIVE, PhaseKind.CONDITIONING, PhaseKind.SWEEP)
                and phase.profile):
            unit = self.method.profile(phase.profile).ops_unit  # conditioning shows its EP too
        now = self.clock.now()
        self._power.restart(now)
        if self._temp:
            self._temp.restart(now)
        return PhaseRecorder(phase, self.method, self.site, now, attempt, unit,
                             live=self.lab.engine.live)

    # --- workloads --------------------------------------------------------------------------
    def _workload_for(self, phase: PhaseInfo) -> WorkloadProfile:
        plan = self.plan
        if phase.kind is PhaseKind.PREFILL:
            bs = int(plan.prefill_block_kib * 1024)
            return WorkloadProfile("PREFILL", bs, 0.0, False, bs, queue_depth=16, kind="prefill",
                                   duration_s=phase.planned_s or None,
                                   passes=plan.prefill_passes)
        if phase.kind is PhaseKind.COM_CHECK:
            return WorkloadProfile(phase.profile or "COM", COM_BLOCK_BYTES, 0.0, False,
                                   COM_BLOCK_BYTES,
                                   queue_depth=16, kind="com", duration_s=phase.planned_s)
        assert phase.profile is not None
        kind = "conditioning" if phase.kind is PhaseKind.CONDITIONING else "active"
        # room for the longest stabilisation the method allows; the sequencer stops the engine
        # at the phase's recorded end (method-notes §4)
        duration = (phase.planned_s + latest_extension_s(self.method, phase)
                    + 2 * self.lab.workload_latency_s)
        if self._sweep.owns(phase):
            return self._sweep.workload(phase, duration)
        return self._intensity_workload(phase.profile, duration, kind)

    def _intensity_workload(self, name: str, duration: float, kind: str) -> WorkloadProfile:
        """``name`` at the intensity the search found for it, or derived from its reference."""
        profile = self.method.profile(name)
        if profile.intensity_of:
            return self._derived_intensity(profile.name, duration, kind)
        found = self.search.get(profile.name)
        step = found.queue_depth if found else self.method.search.queue_depths[-1]
        return profile.at_intensity(self.method.search, step, duration, kind)

    def _derived_intensity(self, name: str, duration: float, kind: str) -> WorkloadProfile:
        """MW2: a fixed fraction of the reference profile's measured IOPS, split per direction
        (method-notes §2: 25 % of MW1's IO; §9: ``rate_iops=R,W`` keeps the mix)."""
        profile = self.method.profile(name)
        ref = profile.intensity_of
        assert ref is not None
        # a reference that measured no IO (a short phase over before a load host started
        # IO: docs/fio.md) is no basis for a rate: the search's figure stands in, said so
        metric = next((m for m in self.metrics if m.name == self.method.profile(ref).metric),
                      None)
        measured = metric.ops_rate if metric and metric.ops_rate > 0 else None
        if metric is not None and measured is None:
            self.log(f"{name}: {ref} measured no IO, so {name}'s rate derives from {ref}'s "
                     "intensity search instead", "WARNING")
        if measured is None and ref in self.search and not math.isnan(self.search[ref].ops_rate):
            measured = self.search[ref].ops_rate  # a re-check's retry has no rate yet (NaN)
        if measured is None:
            raise WorkloadError(f"{name} needs the measured IOPS of {ref}, which has not run")
        total = profile.derived_target(measured)
        reads = round(total * profile.read_pct / 100)
        # a direction the profile uses keeps at least 1 IOPS: fio reads a 0 rate as no limit
        reads = min(max(reads, 1 if profile.read_pct > 0 else 0),
                    total - 1 if profile.read_pct < 100 else total)
        ref_search = self.search.get(ref)
        qd = ref_search.queue_depth if ref_search else self.method.search.queue_depths[-1]
        jobs = ref_search.jobs if ref_search else self.method.search.jobs
        return profile.to_workload(queue_depth=qd, jobs=jobs, rate_iops=(reads, total - reads),
                                   duration_s=duration, kind=kind)

    def _search_phase(self, recorder: PhaseRecorder) -> None:
        """First pass: find 'intensity 100' for each profile, refining between the listed
        probes for random ones (method-notes §2, ``app.sequencer.search``)."""
        cfg, limit = self.method.search, self.method.response_time.max_avg_ms
        for name in search_profiles(self.method, self.plan):
            profile = self.method.profile(name)
            self._ranger.measuring(name, PhaseKind.SEARCH)
            pattern = self._access_pattern(recorder, name)
            generator = self._generator_ceilings(recorder, name)
            kept = self._kept_up(bool(profile.streams))
            probes: list[Probe] = []
            for qd in cfg.queue_depths:
                probes.append(self._probe(recorder, name, qd))
                if probe_over_limit(probes, profile.random, limit, kept):
                    break
            while profile.random and (qd := next_refinement(probes, limit, cfg.tolerance_pct,
                                                            kept)) is not None:
                probes.append(self._probe(recorder, name, qd))
            result = choose_intensity(name, probes, profile.random, profile.ops_unit, cfg.jobs,
                                      limit, cfg.tolerance_pct, len(cfg.queue_depths),
                                      generator, cfg.generator_max_share_pct, kept,
                                      self._rate_of(name))
            result = replace(result, pattern=pattern)
            if profile.streams:  # its step is a total rate (IntensitySearch.stream_rate)
                result = replace(result, rate_iops=cfg.stream_rate(result.queue_depth,
                                                                   profile.read_pct))
            self._publish_search(result, recorder.phase.index)

    def _rate_of(self, name: str) -> RateOf | None:
        """The total IOPS a step of ``name``'s search asks, when its steps are rates (a
        multi-stream profile, ``IntensitySearch.stream_rate``); None for queue depths."""
        if not self.method.profile(name).streams:
            return None
        cfg = self.method.search
        return lambda step: sum(cfg.stream_rate(step, 50.0))

    def _kept_up(self, streams: bool) -> Kept | None:
        """For a multi-stream profile, whether a probe's SUT delivered the total rate its
        step asked, to ``KEPT_UP_SHARE``: one that did not is saturated (method-notes §2)."""
        if not streams:
            return None
        cfg = self.method.search
        return lambda p: p[1] >= KEPT_UP_SHARE * sum(cfg.stream_rate(p[0], 50.0))

    def _generator_ceilings(self, recorder: PhaseRecorder,
                            name: str) -> tuple[GeneratorCeiling, ...]:
        """``name``'s job file on fio's null engine at every listed step, before its probes
        (method-notes §2): what the generator alone reaches. A multi-stream profile's file is
        capped, so it is run at its step's rate × 100 / ``generator_max_share_pct``, proving
        the generator holds that much in the asked shares. The meters are sampled meanwhile
        (``_sampling_until``): a check is fio running for seconds."""
        cfg, profile = self.method.search, self.method.profile(name)
        out = []
        for step in cfg.queue_depths:
            asked = (math.ceil(step * 100 / cfg.generator_max_share_pct) if profile.streams
                     else step)
            work = profile.at_intensity(cfg, asked, cfg.generator_check_s, "generator")
            out.append(self._ceiling(recorder, work, step))
        return tuple(out)

    def _ceiling(self, recorder: PhaseRecorder | None, work: WorkloadProfile,
                 step: int) -> GeneratorCeiling:
        """One null-engine run of ``work``'s job file (method-notes §2), logged."""
        found = self._sampling_until(recorder, self.lab.engine.generator_ceiling, work, step)
        self.log(f"load generator alone, {work.name} at step {step} (null engine, "
                 f"{self.method.search.generator_check_s:g} s): {format_figure(found.iops)} "
                 f"IOPS, {format_figure(found.mib_s)} MiB/s"
                 + (f" of {found.asked_iops:.0f} IOPS asked, shares within "
                    f"{found.share_error_pts:.2f} points" if found.asked_iops else ""))
        return found

    def _access_pattern(self, recorder: PhaseRecorder, name: str) -> MeasuredPattern | None:
        """The pattern ``name``'s own job file draws, from fio's per-IO log of a short
        null-engine run before its search (method-notes §2). A multi-stream profile runs at
        ``PATTERN_RATE_IOPS`` in all, enough IOs for its smallest stream and its bands'
        curve; an uncapped one at the first listed depth."""
        cfg, profile = self.method.search, self.method.profile(name)
        step = (max(1, round(PATTERN_RATE_IOPS / cfg.stream_iops_per_step)) if profile.streams
                else cfg.queue_depths[0])
        return self._judged_pattern(recorder, profile.at_intensity(
            cfg, step, cfg.generator_check_s, "generator"))

    def _judged_pattern(self, recorder: PhaseRecorder | None,
                        work: WorkloadProfile) -> MeasuredPattern | None:
        """The pattern fio's per-IO log shows for ``work``'s job file on the null engine,
        logged with any departure from the method (``app.sequencer.access_check``), which the
        verdict
        counts; None for a trace replay, whose offsets are the trace's."""
        found = self._sampling_until(recorder, self.lab.engine.access_pattern, work)
        if found is None:
            self.log(f"access pattern of {work.name}: the trace's own, replayed as recorded; "
                     "not checked against the method")
            return None
        departures = pattern_departures(found, self.method.profile(work.name))
        self.log(f"access pattern of {work.name}'s job file (null-engine pre-run, "
                 f"{found.source}): {describe_pattern(found)}"
                 + (f" — NOT the method's: {'; '.join(departures)}" if departures else ""),
                 "WARNING" if departures else "INFO")
        return found

    def _pre_run(self, phase: PhaseInfo) -> ev.SearchResult:
        """The null-engine pre-run of an active profile that is not searched (method-notes §2):
        MW2 at the rate derived from MW1's measurement, a trace replay with the looped trace
        it will run, each just before its phase, once its rate is known. A capped file (MW2)
        runs its ceiling check at the rate × 100 / ``generator_max_share_pct``, like a
        multi-stream profile's, and its pattern at ``PATTERN_RATE_IOPS`` (the same file with
        a higher cap: enough IOs to judge). It runs between phases, so the meters are not
        sampled for its few seconds (no phase is measuring then). Its figures are logged now;
        the row is published once the phase has measured the rate it is judged against
        (:meth:`_publish_pre_run`), as a search's row is once its probes are done."""
        name = phase.profile or ""
        cfg, profile = self.method.search, self.method.profile(name)
        work = self._intensity_workload(name, cfg.generator_check_s, "generator")
        ceiling = self._ceiling(None, _scaled(work, 100 / cfg.generator_max_share_pct),
                                work.queue_depth)
        pattern = self._judged_pattern(None, _scaled(
            work, PATTERN_RATE_IOPS / sum(work.rate_iops or (PATTERN_RATE_IOPS,))))
        basis = (f"not searched: {profile.intensity_pct:g} % of {profile.intensity_of}'s "
                 f"measured rate" if profile.intensity_of else
                 "not searched: a trace replay at the trace's own pace; its access pattern "
                 "is the trace's")
        return ev.SearchResult(name, work.queue_depth, work.jobs, math.nan, profile.ops_unit,
                               math.nan, work.rate_iops, (), "", (ceiling,), pattern, basis)

    def _publish_pre_run(self, pre_run: ev.SearchResult, phase: PhaseInfo) -> None:
        """``pre_run`` with the phase's measured rate, judged by the search's generator rule
        (``generator_note``): a capped file that fio alone could not hold at the rate × 100 /
        ``generator_max_share_pct``, or an uncapped one (an untimed replay) whose measured
        rate is above that share of its ceiling, is the generator's limit."""
        name = self.method.profile(pre_run.profile).metric
        metric = next((m for m in reversed(self.metrics) if m.name == name), None)
        if metric is not None:
            measured = (pre_run.queue_depth, metric.ops_rate, metric.avg_response_ms)
            pre_run = replace(pre_run, ops_rate=metric.ops_rate,
                              avg_response_ms=metric.avg_response_ms,
                              note=generator_note(measured, pre_run.ops_unit, pre_run.generator,
                                                  self.method.search.generator_max_share_pct))
        self.publish(pre_run)
        if pre_run.note:
            self.log(f"{pre_run.profile}: {pre_run.note}", "WARNING", phase.index)

    def _sampling_until(self, recorder: PhaseRecorder | None, call: Callable[..., T],
                        *args) -> T:
        """``call(*args)`` on a helper thread while this one keeps the meters on their grid
        and honours Abort and Pause; its result, or what it raised. The helper's end wakes
        the loop (it used to wait 50 ms for the helper before each sample, so every poll of a
        generator check came 50 ms late: issue 27). An engine whose calls do not block (the
        simulated ones) is called inline, so a fake-clock run stays deterministic, and so is
        a call between phases (``recorder`` None: no phase to sample into)."""
        if recorder is None or not control_blocks(self.lab.engine):
            return call(*args)
        self._sample(recorder, self.clock.now())  # before the helper thread takes over
        with ThreadPoolExecutor(1, thread_name_prefix="storwatt-generator") as pool:
            job = pool.submit(call, *args)
            job.add_done_callback(lambda _: self._wake.set())
            while not job.done():
                self._check_flags()
                now = self.clock.now()
                self._sample(recorder, now)
                self._close_intervals(recorder, now)
                self._sleep(recorder, now, None, 0.0, job)
            return job.result()

    def _probe(self, recorder: PhaseRecorder, name: str, qd: int) -> Probe:
        """One search probe of ``probe_s`` at queue depth ``qd``: its figures. The engine
        times the probe from its own IO start (fio's ``runtime``), and the station waits for
        it to end, at most ``startup_s`` longer: a load host's start-up is never probe time
        (``probe_window``)."""
        cfg, profile = self.method.search, self.method.profile(name)
        wp = profile.at_intensity(cfg, qd, cfg.probe_s, "search")
        start = self.clock.now()
        slices: list[WorkloadInterval] = []
        self._drive(recorder, wp, cfg.probe_s + cfg.startup_s, until_done=True, kept=slices)
        return probe_figures(name, qd, slices, profile.ops_unit, self.clock.now() - start,
                             cfg.startup_s, cfg.probe_s)

    def _publish_search(self, result: ev.SearchResult, phase_index: int) -> None:
        self.search[result.profile] = result
        self.publish(result)
        at = (f"step {result.queue_depth}, {sum(result.rate_iops)} IOPS asked in all, each "
              f"stream capped at its share" if result.rate_iops and
              self.method.profile(result.profile).streams else
              f"queue depth {result.queue_depth} × {result.jobs} job(s)")
        self.log(f"intensity search {result.profile}: {at} → "
                 f"{format_figure(result.ops_rate)} {result.ops_unit} "
                 f"at {format_figure(result.avg_response_ms)} ms"
                 + (f" ({result.note})" if result.note else ""),
                 "WARNING" if result.note else "INFO", phase=phase_index)

    def _ranging_phase(self, recorder: PhaseRecorder) -> None:
        """Dedicated ranging pass (method-notes §3): every active profile at the intensity it
        will run at, then ready idle, each ``ranging.profile_s`` on auto range, before the
        active sequence starts."""
        seconds = self.method.ranging.profile_s
        for step in self.plan.active:
            workload = self._intensity_workload(step.profile,
                                                seconds + 2 * self.lab.workload_latency_s,
                                                "ranging")
            self._ranger.measuring(step.profile, PhaseKind.RANGING)
            self._drive(recorder, workload, seconds)
        self._ranger.measuring(IDLE_KEY, PhaseKind.RANGING)
        self._drive(recorder, None, seconds)

    def _drive(self, recorder: PhaseRecorder, profile: WorkloadProfile | None,
               duration_s: float | None, until_done: bool = False,
               kept: list[WorkloadInterval] | None = None) -> None:
        """Run one workload segment (or idle) while sampling.
        The segment ends ``duration_s`` after it began plus any stabilisation extension the
        recorder decides on the way (method-notes §4); with ``until_done`` it ends earlier
        when the engine has finished the profile's own duration. ``kept`` collects the
        segment's workload slices (a search probe's figures); a phase's slices are otherwise
        the store's and the recorder's alone, so a long phase does not pile them up here."""
        engine, latency = self.lab.engine, self.lab.workload_latency_s
        # asked once a segment: a Protocol isinstance walks the class each time (3 % of a
        # simulated run's CPU when it was asked each loop)
        shows_rates = engine if isinstance(engine, LiveRates) else None
        start = self.clock.now()
        end = None
        self._steady_verdict = None  # this segment's rounds are judged afresh
        control = WorkloadControl(engine, self._wake)
        if profile is not None:
            if control_blocks(engine):
                # the sample due now first: the worker thread, once started, holds the
                # interpreter for its first milliseconds (job files, fio processes)
                self._sample(recorder, start)
            control.start(profile)
        try:
            while True:
                self._check_flags()
                now = self.clock.now()
                end = None if duration_s is None else start + duration_s + recorder.extension_s
                self._sample(recorder, now)
                running = profile is not None and control.started
                if running:
                    collected = self._collect(recorder, engine.poll())
                    if kept is not None:
                        kept += collected
                    if shows_rates is not None:
                        self._show_rates(recorder, shows_rates)
                self._close_intervals(recorder, now)
                if end is not None and now >= end + (latency if profile else 0):
                    break
                if (steady := self._steady_verdict) is not None and steady.steady:
                    self.log(f"{recorder.phase.name}: {self._sweep.reached_text(steady)} "
                             "(method-notes §5)", "INFO", recorder.phase.index)
                    break
                if running and (end is None or until_done) and not engine.running:
                    break
                self._sleep(recorder, now, end, latency)
        except BaseException:
            if profile is not None:
                recorder.workload_result = control.stop().result()
            raise
        if profile is not None:
            stopping = control.stop()
            self._sample_until(recorder, stopping)
            recorder.workload_result = stopping.result()
            collected = self._collect(recorder, self._drain(engine),
                                      until=(end or math.inf) + latency)
            if kept is not None:
                kept += collected
        self._close_intervals(recorder, self.clock.now(), final=True)

    def _sample_until(self, recorder: PhaseRecorder, pending: Future) -> None:
        """Keep the meters on their grid until ``pending`` (an engine's stop, seconds with
        load hosts) has finished; an inline stop has finished already."""
        try:
            while not pending.done():
                self._sample(recorder, self.clock.now())
                deadlines = [self._power.next_due]
                if self._temp:
                    deadlines.append(self._temp.next_due)
                self._wake.clear()
                if not pending.done():
                    self.clock.sleep_until(min(deadlines), self._wake)
        except BaseException:
            pending.exception()  # the engine has stopped before the phase fails
            raise

    @staticmethod
    def _drain(engine) -> list[WorkloadInterval]:
        try:
            return engine.poll()
        except WorkloadError:
            return []

    def _collect(self, recorder: PhaseRecorder, slices: list[WorkloadInterval],
                 until: float = math.inf) -> list[WorkloadInterval]:
        """Re-base the engine's slices to run time once (dropping any that end after
        ``until``: the tail of a stopped engine), record and publish them."""
        slices = [rebased for s in slices
                  if (rebased := replace(s, t_start=self.clock.to_run(s.t_start),
                                         t_end=self.clock.to_run(s.t_end))).t_end <= until]
        if slices:
            recorder.add_workload(slices)
            self.publish(ev.WorkloadIntervals(recorder.phase.index, tuple(slices),
                                              recorder.attempt,
                                              tuple(recorder.slice_window(s) for s in slices)))
        return slices

    def _show_rates(self, recorder: PhaseRecorder, engine: LiveRates) -> None:
        """Publish an engine's display rates (fio's load hosts while their phase runs),
        re-based to run time; they are for the run view only, never recorded."""
        rates = engine.live_rates()
        if rates:
            self.publish(ev.HostRates(recorder.phase.index, tuple(
                replace(r, t=self.clock.to_run(r.t)) for r in rates)))

    def _check_flags(self) -> None:
        if self._abort.is_set():
            raise RunAborted(self._abort_reason)
        if self._pause.is_set():
            raise _Paused()

    def _sample(self, recorder: PhaseRecorder, now: float) -> None:
        idx = recorder.phase.index
        try:
            power = self._power.poll(now)
        except MeterLost:
            self._report_gaps(idx)
            raise
        if power:
            self._ranger.observe(power)
            self._publish_samples(idx, recorder.add_power(power), ((), ()))
            self._progress(recorder, now)
        if self._temp:
            temps = self._temp.poll(now)
            if temps:
                self._publish_samples(idx, ((), ()), recorder.add_temperature(temps))
        self._report_gaps(idx)

    def _publish_samples(self, idx: int, power: tuple[tuple, tuple], temps: tuple[tuple, tuple]
                         ) -> None:
        """Publish samples whose place in the record is decided (the recorder holds back those
        past a stabilisation end still to be judged)."""
        if power[0]:
            self.publish(ev.PowerSamples(idx, *power))
        if temps[0]:
            self.publish(ev.TemperatureSamples(idx, *temps))

    def _report_gaps(self, phase_index: int) -> None:
        for note in self.lab.input_notes():
            self.log(note, "WARNING", phase_index)
        for watch in self._watches:
            for level, message in watch():
                self.log(message, level, phase_index)
        for sampler in (self._power, self._temp):
            for gap in sampler.take_gaps() if sampler else ():
                start = gap.t_from
                self.log(f"sample gap {start:.1f}–{gap.t_to:.1f} s: {gap.reason}"
                         if gap.missed else f"{gap.reason} (at {start:.1f} s)",
                         "WARNING", phase_index)

    def _close_intervals(self, recorder: PhaseRecorder, now: float, final: bool = False) -> None:
        """Close due intervals; an engine without live figures (fio client mode) reports
        only when it stops, so its phase's intervals close after the final results."""
        if recorder.ops_unit and not final and not self.lab.engine.live:
            return
        latency = self.lab.workload_latency_s if recorder.ops_unit and not final else 0.0
        hold = WORKLOAD_HOLD_S if latency else 0.0
        extended = recorder.extra_stabilisation
        closed = recorder.close_due(now, latency, hold)
        for record in closed:
            self.publish(ev.IntervalClosed(record))
            if record.index == 0 and not final:
                self._recheck(recorder, record)
        if closed and self._sweep.owns(recorder.phase):
            self._judge_rounds(recorder)
        if recorder.extra_stabilisation > extended:
            self._announce_extension(recorder, now)
        self._publish_samples(recorder.phase.index, *recorder.release_held())

    def _judge_rounds(self, recorder: PhaseRecorder) -> None:
        """After a round of the matrix's preconditioning closes: the PTS steady-state verdict
        over the attempt's rounds (``SweepSteps.judge``, its one author), published when it
        changes so storage keeps the latest with the phase and the live plot shows it."""
        verdict = self._sweep.judge(recorder.phase, [r.ops_rate for r in recorder.intervals])
        if verdict is not None and verdict != self._steady_verdict:
            self.publish(ev.SteadyStateJudged(recorder.phase.index, recorder.attempt, verdict))
        self._steady_verdict = verdict

    def _recheck(self, recorder: PhaseRecorder, first: IntervalRecord) -> None:
        """Before a searched random profile's stabilisation goes on, its first interval — the
        workload at the chosen intensity — must still meet the response-time limit; over it,
        the profile restarts one bisection step lower (method-notes §2). Costs no time when
        it passes; each failure lowers the depth, so the restarts are bounded."""
        phase = recorder.phase
        found = self.search.get(phase.profile or "")
        if (phase.kind is not PhaseKind.ACTIVE or found is None or not self.method.search.recheck
                or not self.method.profile(found.profile).random):
            return
        checked = recheck(found, first.ops_rate, first.avg_response_ms,
                          self.method.response_time.max_avg_ms, self._rate_of(found.profile))
        self.log(checked.message, "INFO" if checked.passed else "WARNING", phase.index)
        if checked.retry is not None:
            self._publish_search(checked.retry, phase.index)
            raise _Rechecked(checked.retry.note)

    def _announce_extension(self, recorder: PhaseRecorder, now: float) -> None:
        """Record the moved measurement window (storage, reports and views follow it)."""
        start, end = recorder.measurement_window()
        phase = recorder.phase
        self.publish(ev.StabilisationExtended(phase.index, recorder.attempt, now,
                                              recorder.stabilisation_intervals, start, end,
                                              recorder.extension_s))
        self.log(f"{phase.name}: the EP of the last stabilisation interval lies outside "
                 f"±{self.method.stability.tolerance_pct:g} % of its weighted moving average; "
                 f"stabilisation extended to {recorder.stabilisation_intervals} intervals "
                 f"(method-notes §4), measurement window now {start:.1f}–{end:.1f} s "
                 f"(planned end {end - recorder.extension_s:.1f} s, latest end {end:.1f} s)",
                 "INFO", phase.index)

    def _sleep(self, recorder: PhaseRecorder, now: float, end: float | None,
               latency: float, pending: Future | None = None) -> None:
        """Sleep until the next grid point or deadline, or until woken (a control call, a
        helper ``pending`` that has finished meanwhile, pause, abort)."""
        deadlines = [self._power.next_due]
        if self._temp:
            deadlines.append(self._temp.next_due)
        if end is not None:
            deadlines.append(end + latency)
        _, next_close = recorder.interval_bounds(len(recorder.intervals))
        next_close += latency if recorder.ops_unit else 0.0
        if next_close > now:  # one past is held back (plan's last interval, figures to come)
            deadlines.append(next_close)
        if latency and self.lab.engine.running:
            # engines that report asynchronously (fio) are polled between samples too
            deadlines.append(now + max(0.05, min(0.5, self.method.sample_period_s)))
        self._wake.clear()
        if not (self._abort.is_set() or self._pause.is_set()
                or (pending is not None and pending.done())):
            self.clock.sleep_until(min(deadlines), self._wake)

    def _progress(self, recorder: PhaseRecorder, now: float) -> None:
        if now - self._last_progress < 1.0:
            return
        self._last_progress = now
        planned = recorder.phase.planned_s + recorder.extension_s  # the latest end
        in_phase = now - recorder.t_start
        phase_fraction = min(1.0, in_phase / planned) if planned else 0.0
        done = self._done_s + min(in_phase, planned)
        total = self.planned_s + self._extension_s + recorder.extension_s
        self.publish(ev.Progress(now, max(0.0, total - done),
                                 done / total if total else 0.0, recorder.phase.index,
                                 phase_fraction))

    # --- results -------------------------------------------------------------------------------
    def _publish_phase_results(self, phase: PhaseInfo, recorder: PhaseRecorder) -> None:
        metric: MetricResult | None = None
        if phase.kind is PhaseKind.ACTIVE and phase.profile:
            profile = self.method.profile(phase.profile)
            metric = self._judged_rate(profile, recorder.active_result(profile.metric,
                                                                       profile.metric_unit))
            self._publish_histogram(phase, recorder)
        elif phase.kind is PhaseKind.SWEEP:
            metric = recorder.active_result(self._sweep.metric_name(phase), "IOPS/W")
            self._publish_histogram(phase, recorder)  # the DI histogram compare (§6)
        elif phase.kind is PhaseKind.READY_IDLE:
            metric = recorder.ready_idle_result(self.config.sut.raw_capacity_bytes)
        elif phase.kind is PhaseKind.COM_CHECK and phase.profile:
            written = recorder.workload_result.write_bytes if recorder.workload_result else 0
            com = phase.profile.removeprefix("COM-")
            metric = com_result(phase, com, written, recorder.capacity_before, self._capacity())
            if com in DATA_REDUCTION_COMS:
                evidence = data_set_evidence(self.lab.data_set_probe, com, written)
                if observed(metric):
                    evidence += (f"; the COM's ratio {format_figure(metric.value)} is the SUT's "
                                 "savings, from its reported used capacity before and after")
                self.log(evidence, "INFO", phase.index)
                if not metric.valid:
                    metric = replace(metric, reason=f"{metric.reason}; {evidence}")
        if metric is not None:
            self.metrics.append(metric)
            self.publish(ev.MetricComputed(metric))
            if not metric.valid:
                self.log(f"{metric.name} {not_valid_word(metric)}: {metric.reason}", "WARNING",
                         phase.index)
            if phase.kind is PhaseKind.SWEEP and (why := self._sweep.record(phase, metric)):
                self.log(f"sweep ends after {phase.name}: {why} (method-notes §6)", "INFO",
                         phase.index)

    def _judged_rate(self, profile: IOProfile, metric: MetricResult) -> MetricResult:
        """A derived profile's metric (MW2) INVALID when its achieved rate left the tolerance
        of its share of the reference's measured rate (the reference's latest metric, as the
        verifier reads it; method-notes §2, "What ran is judged")."""
        if not profile.intensity_of:
            return metric
        ref = self.method.profile(profile.intensity_of)
        reference = next((m for m in reversed(self.metrics) if m.name == ref.metric), None)
        why = derived_rate_problem(profile.name, metric.ops_rate, ref.name,
                                   reference.ops_rate if reference else math.nan,
                                   profile.intensity_pct, self.method.search.derived_rate_tolerance)
        if why is None:
            return metric
        return replace(metric, valid=False,
                       reason="; ".join(r for r in (metric.reason, why) if r))

    def _publish_histogram(self, phase: PhaseInfo, recorder: PhaseRecorder) -> None:
        hist = recorder.histogram()
        if hist.total == 0:
            return
        rt = self.method.response_time
        levels = hist.confidence_levels(rt.confidence_levels)
        self.publish(ev.HistogramReady(phase.index, phase.profile or "", hist.to_bins(), levels,
                                       rt.ceiling_ms, hist.count_above(rt.ceiling_ms * 1e6),
                                       recorder.attempt))


def _scaled(work: WorkloadProfile, factor: float) -> WorkloadProfile:
    """``work`` with its rate cap scaled by ``factor`` in the same read/write split, each
    direction it uses at least 1 IOPS; an uncapped workload as it is."""
    if work.rate_iops is None:
        return work
    reads, writes = work.rate_iops
    return replace(work, rate_iops=(max(1, math.ceil(reads * factor)) if reads else 0,
                                    max(1, math.ceil(writes * factor)) if writes else 0))
