"""The ranging practice of the method's reference tool (method-notes §3): a ranging pass on
auto range, then the testing pass on fixed ranges.

The sequencer calls :class:`Ranger` at three points only: before each phase
(:meth:`Ranger.before_phase`, the profile boundary), when a ranging segment starts or ends
(:meth:`Ranger.measuring`) and with every batch of power samples (:meth:`Ranger.observe`).
Phases before the testing pass (pre-fill, search, the dedicated ranging pass) run on auto
range; from the first testing phase on, each phase holds the fixed ranges of its profile,
changed only here, at the boundary before the phase and its stabilisation start. Every change
is published (:class:`~app.sequencer.events.RangesApplied`) and written to the run log.

Ranges are keyed by power input (``MAIN_INPUT`` for a single meter; each input's name when the
SUT has several, ``app.sequencer.power_inputs``): each input's meter is ranged on its own
readings, by the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from app.method.model import Method, PhasePlan
from app.core.records import PhaseInfo, PhaseKind
from app.sequencer import events as ev
from app.sequencer.range_plan import (ENVELOPE_KEY, IDLE_KEY, PeakRecord, RangePlan,
                                      RangeSetting, envelope, setting_from)
from drivers.interfaces import (FLAG_GARBAGE, FLAG_IMPLAUSIBLE, FLAG_INVALID, FLAG_NO_DATA,
                                FLAG_OVERRANGE, FLAG_RANGE_CHANGE, InstrumentError, PowerMeter,
                                PowerSample, RangingMeter)

#: phases of the testing pass: they run on fixed ranges
TESTING_KINDS = frozenset({PhaseKind.CONDITIONING, PhaseKind.ACTIVE, PhaseKind.READY_IDLE,
                           PhaseKind.COM_CHECK})
#: flags that say a sample's volts and amps are not a reading of the load (on auto range a
#: sample whose uncertainty cannot be evaluated still is: PTDaemon gives none on auto range;
#: an implausible one is not: its fields contradict each other)
UNREADABLE = frozenset({FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, FLAG_OVERRANGE,
                        FLAG_RANGE_CHANGE, FLAG_IMPLAUSIBLE})
#: which phase records the peaks, per ``[ranging] mode``
PASS_KIND = {"search": PhaseKind.SEARCH, "dedicated": PhaseKind.RANGING}

Log = Callable[[str, str, int | None], None]


def range_key(phase: PhaseInfo) -> str:
    """The range plan's key for a testing phase: its IO profile, IDLE for ready idle, the
    envelope for COM checks (their writes were not ranged)."""
    if phase.kind is PhaseKind.READY_IDLE:
        return IDLE_KEY
    if phase.kind in (PhaseKind.ACTIVE, PhaseKind.CONDITIONING) and phase.profile:
        return phase.profile
    return ENVELOPE_KEY


class Ranger:
    """Ranges one run's power meters, one per power input (``meters``: input name → meter).
    ``advised`` is a range plan confirmed from an earlier run (the range advisor): then no
    peaks are recorded and that plan is held."""

    def __init__(self, method: Method, plan: PhasePlan, meters: Mapping[str, PowerMeter],
                 publish: Callable[[ev.RunEvent], None], log: Log, now: Callable[[], float],
                 advised: RangePlan | None = None, *, several_inputs: bool = False) -> None:
        self.method = method
        #: whether ``meters`` are the SUT's power inputs (keyed by the names the lab typed) or
        #: its one meter (keyed MAIN_INPUT): decided by the set-up, never by comparing a typed
        #: name with MAIN_INPUT, so an input named "main" is an input like any other
        self.several_inputs = several_inputs
        self.rule = method.ranging
        self.phase_plan = plan
        self.meters = dict(meters)
        self.publish = publish
        self.log = log
        self.now = now
        self.plan = advised
        self.enabled = advised is not None or self.rule.mode != "off"
        self._records: dict[tuple[str, str], PeakRecord] = {}  # (input, key) → peaks
        self._key: str | None = None
        self._peaks_failed = False
        #: fixed ranges each input holds; None: auto
        self._applied: dict[str, tuple[float, float] | None] = {}
        #: inputs whose meter was found able to range: a Protocol isinstance walks the class
        #: each time, and the pass asks for every batch of samples
        self._ranging: dict[str, RangingMeter] = {}

    # --- run start ------------------------------------------------------------------------
    def start(self) -> None:
        """Refuse a meter that cannot be ranged, or an advised plan it cannot hold, before
        any IO is started."""
        if not self.enabled:
            return
        for name in self.meters:
            meter = self._ranging_meter(name)
            if meter.crest_factor < self.rule.min_crest_factor:
                raise InstrumentError(
                    f"the power meter {self._which(name)}is set to crest factor "
                    f"{meter.crest_factor:g}, below the method's ranging.min_crest_factor "
                    f"{self.rule.min_crest_factor:g} (method-notes §10)")
        if self.plan is not None:
            for name in self.meters:
                self._check_plan(name, self._ranging_meter(name), self.plan)
            self.publish(ev.RangePlanReady(self.now(), self.plan))
            self._log_plan(f"range plan from {self.plan.source} (range advisor)", None)

    def _ranging_meter(self, name: str) -> RangingMeter:
        if name in self._ranging:
            return self._ranging[name]
        meter = self.meters[name]
        if not isinstance(meter, RangingMeter):
            raise InstrumentError(f"the method ranges the power meter {self._which(name)}(ranging."
                                  f"mode = {self.rule.mode}), but this meter driver cannot "
                                  "set auto and fixed ranges")
        self._ranging[name] = meter
        return meter

    @staticmethod
    def _check_plan(name: str, meter: RangingMeter, plan: RangePlan) -> None:
        if ENVELOPE_KEY not in plan.settings.get(name, {}):
            raise InstrumentError(f"the range plan from {plan.source} has no ranges for every "
                                  f"phase of the {name} input; range again "
                                  "(--ranging method)")
        for per_name, per_profile in plan.settings.items():
            if per_name != name:
                continue
            for key, s in per_profile.items():
                for value, allowed, unit in ((s.volts, meter.volt_ranges, "V"),
                                             (s.amps, meter.amp_ranges, "A")):
                    if allowed and value not in allowed:
                        raise InstrumentError(
                            f"the range plan from {plan.source} holds {value:g} {unit} for "
                            f"{per_name} {key}, which is not a range of this meter "
                            f"({', '.join(f'{a:g}' for a in allowed)} {unit}); range again "
                            "(--ranging method)")

    # --- the sequencer's hooks --------------------------------------------------------------
    def before_phase(self, phase: PhaseInfo) -> None:
        """The profile boundary: the only place ranges change."""
        self._key = None
        if not self.enabled:
            return
        if phase.kind not in TESTING_KINDS:
            for name in self.meters:
                self._apply(name, phase, None)
            return
        if self.plan is None:
            self.plan = self._plan_from_peaks()
            self.publish(ev.RangePlanReady(self.now(), self.plan))
            self._log_plan("range plan from the ranging pass", phase.index)
        for name in self.meters:
            setting = self.plan.setting(name, range_key(phase))
            self._apply(name, phase, (setting.volts, setting.amps))

    def measuring(self, key: str, during: PhaseKind) -> None:
        """A segment of ``during`` starts running ``key`` (a profile or IDLE), until the next
        segment or phase. Peaks are recorded only in the pass the method's mode names, and
        never for an advised plan."""
        recording = self.plan is None and PASS_KIND.get(self.rule.mode) is during
        self._key = key if recording else None

    def observe(self, samples: list[PowerSample]) -> None:
        """Fold a batch of samples of the running segment into its peak record; the meter is
        asked for its peaks once per batch."""
        if self._key is None or not samples:
            return
        for name in self.meters:
            peak_v, peak_a = self._peaks(name)
            record = self._records.get((name, self._key), PeakRecord())
            for s in samples:  # auto range: "uncertainty unknown" samples still show the load
                reading = self._reading_of(s, name)
                if reading is not None and not reading.flags & UNREADABLE:
                    record = record.merged(reading.volts, reading.amps, peak_v, peak_a)
            self._records[(name, self._key)] = record

    def _peaks(self, name: str) -> tuple[float, float]:
        """The meter's peaks; a failed query costs this batch its peaks (the rms rule still
        holds), and is logged once, never failing the pass."""
        try:
            return self._ranging_meter(name).peaks()
        except InstrumentError as exc:
            if not self._peaks_failed:
                self._peaks_failed = True
                self.log(f"ranging pass: the meter's peaks could not be read ({exc}); those "
                         "readings count by their rms only", "WARNING", None)
            return math.nan, math.nan

    # --- internals -------------------------------------------------------------------------
    def _apply(self, name: str, phase: PhaseInfo, ranges: tuple[float, float] | None) -> None:
        if name in self._applied and self._applied[name] == ranges:
            return
        meter = self._ranging_meter(name)
        if ranges is None:
            meter.auto_range()
            text = "auto range (ranging pass, method-notes §3)"
        else:
            meter.set_ranges(*ranges)
            text = (f"fixed ranges {ranges[0]:g} V / {ranges[1]:g} A for "
                    f"{range_key(phase)} (testing pass)")
        self._applied[name] = ranges
        key = range_key(phase) if ranges is not None else ""
        self.publish(ev.RangesApplied(self.now(), phase.index, name, key,
                                      *(ranges or (None, None))))
        self.log(f"range change, {name} input, before {phase.name}: {text}", "INFO",
                 phase.index)

    def _plan_from_peaks(self) -> RangePlan:
        """Fixed ranges per profile from the recorded peaks; a derived profile (MW2) holds its
        reference's ranges when it had no segment of its own, and every key the pass did not
        see (ready idle during a search-mode pass, COM checks) holds the envelope."""
        keys = [s.profile for s in self.phase_plan.active] + [IDLE_KEY, ENVELOPE_KEY]
        settings: dict[str, dict[str, RangeSetting]] = {}
        for name in self.meters:
            records = {key: r for (of, key), r in self._records.items() if of == name}
            if not records:
                raise InstrumentError(f"the ranging pass recorded no usable power sample "
                                      f"{self._which(name)}, so no fixed range can be chosen; "
                                      "check the meter and rerun")
            meter = self._ranging_meter(name)
            whole = envelope(records.values())
            settings[name] = {}
            for key in keys:
                record = records.get(key)
                if record is None and key not in (IDLE_KEY, ENVELOPE_KEY):
                    ref = self.method.profile(key).intensity_of
                    record = records.get(ref) if ref else None
                settings[name][key] = setting_from(record or whole, meter.volt_ranges,
                                                   meter.amp_ranges, meter.crest_factor,
                                                   self.rule.headroom_pct)
        crest = min(self._ranging_meter(name).crest_factor for name in self.meters)
        return RangePlan(settings, "ranging pass", self.rule.headroom_pct, crest)

    def _which(self, name: str) -> str:
        """How a message names the meter of input ``name`` ("" for the single meter)."""
        return f"of power input {name} " if self.several_inputs else ""

    def _reading_of(self, sample: PowerSample, name: str) -> PowerSample | None:
        """The reading of input ``name`` in ``sample`` (the sample itself for the one meter)."""
        if not self.several_inputs:
            return sample
        return next((p for p in sample.inputs if p.input == name), None)

    def _log_plan(self, title: str, phase_index: int | None) -> None:
        assert self.plan is not None
        self.log(f"{title}: " + "; ".join(self.plan.describe()), "INFO", phase_index)
