"""Sample timing is judged on the sampler's grid (issue 24 item 4): at the method's largest
sample period (5 s) a few ms of jitter made every gap 5.003 s against "> 5 s" and every metric
INVALID; a sample belongs to its scheduled grid point, and only a missed point is a gap."""

from __future__ import annotations

import re
from dataclasses import replace

from app.method.loader import load_method
from app.sequencer.conformance import grid_points, longest_gap
from drivers.interfaces import PowerSample
from drivers.simulators.direct_meters import SimulatedPowerMeter
from drivers.clock import FakeClock
from tests.support.sequencer_runs import COMPLIANT, assert_all_valid
from tests.support.sequencer_runs import run_short_sequence as run

FIVE_SECONDS = load_method(COMPLIANT).model_copy(update={"sample_period_s": 5.0})


#: SR's measurement window runs from 10 to 40 minutes into the profile (the plan's intervals)
INSIDE_SR_MEASUREMENT_S = 20 * 60.0


class LateStamps(SimulatedPowerMeter):
    """Every other sample stamped 3 ms after its grid point (a loaded station's poll), and
    optionally ``drop`` consecutive grid points without a usable sample inside SR's
    measurement window."""

    def __init__(self, sut, drop: int = 0) -> None:
        super().__init__(sut)
        self.n, self.drop, self.sr_start = 0, drop, None

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        self.n += 1
        running = self.sut.profile
        in_sr = running is not None and running.name == "SR" and running.kind == "active"
        if in_sr and self.sr_start is None:
            self.sr_start = t
        if in_sr and self.drop and 0 <= t - self.sr_start - INSIDE_SR_MEASUREMENT_S \
                < self.drop * FIVE_SECONDS.sample_period_s:
            return replace(sample, watts=float("nan"))  # a grid point without a usable sample
        return replace(sample, t=t + 0.003 * (self.n % 2))


def test_grid_points_put_a_late_sample_on_its_point() -> None:
    assert grid_points([0.0, 5.003, 10.0, 15.004], 0.0, 5.0) == [0.0, 5.0, 10.0, 15.0]
    assert longest_gap(grid_points([0.0, 5.003, 10.0, 15.004], 0.0, 5.0), 0.0, 20.0) == 5.0


def test_a_5_second_period_with_normal_jitter_is_valid() -> None:
    seq, _ = run(FIVE_SECONDS, power=LateStamps)
    assert_all_valid(seq)


def test_a_missed_grid_point_is_the_gap_printed_to_a_millisecond() -> None:
    seq, _ = run(FIVE_SECONDS, power=lambda sut: LateStamps(sut, drop=1))
    reasons = [m.reason for m in seq.metrics if not m.valid]
    assert [m.name for m in seq.metrics if not m.valid] == ["EP_SR"], reasons
    assert re.search(r"power samples missing for 10\.000 s \(1 grid point\(s\) of the 5 s "
                     r"sample period without a usable sample; limit 5 s", reasons[0]), reasons


class OneLateReply(SimulatedPowerMeter):
    """Answers one read inside SR's measurement window 5.9 s late (inside the driver's
    timeout): the station's clock moves on while the meter is silent."""

    def __init__(self, sut, clock: FakeClock) -> None:
        super().__init__(sut)
        self.clock, self.sr_start, self.late = clock, None, False

    def read(self, t: float) -> PowerSample:
        running = self.sut.profile
        if running is not None and running.name == "SR" and running.kind == "active":
            self.sr_start = t if self.sr_start is None else self.sr_start
            if not self.late and t - self.sr_start >= INSIDE_SR_MEASUREMENT_S:
                self.late = True
                self.clock.advance(5.9)
        return super().read(t)


def test_one_reply_5_9_s_late_is_a_real_gap_and_invalid() -> None:
    """Issue 38, seen 5: the late reply was stamped at its poll and the next reading floored
    to its grid point, so a 6.9 s gap between readings was judged 5.0 s and VALID. Placed at
    the time the meter answered, the gap is 6 grid points (6.9 s): EP_SR INVALID, the
    others VALID (the 5 s period with jitter above stays VALID)."""
    method = load_method(COMPLIANT)
    assert method.sample_period_s == 1.0 and method.instruments.max_power_interval_s == 5.0
    clock = FakeClock()
    seq, _ = run(method, power=lambda sut: OneLateReply(sut, clock), clock=clock)
    bad = {m.name: m.reason for m in seq.metrics if not m.valid}
    assert list(bad) == ["EP_SR"], bad
    assert re.search(r"power samples missing for 6\.000 s \(5 grid point\(s\) of the 1 s "
                     r"sample period", bad["EP_SR"]), bad


def test_the_verifier_judges_the_stored_answer_times_by_the_same_rule() -> None:
    """The verifier re-derives the 5 s rule from the stored sample times (its own
    ``power_gap_broken``): with the late reply stored at 8.9 s the window is broken; the same
    run stamped at its polls (3.0 s) was not — the times the station now stores are the ones
    both judge."""
    from tests.support.bundles import verifier_module
    broken = verifier_module().power_gap_broken
    answered = [0.0, 1.0, 2.0, 8.9, 9.0, 10.0]
    polled = [0.0, 1.0, 2.0, 3.0, 8.9, 9.0, 10.0]
    assert broken(answered, 0.0, 1.0, 0.0, 11.0, 5.0)
    assert not broken(polled, 0.0, 1.0, 0.0, 11.0, 5.0)
    assert longest_gap(grid_points(answered, 0.0, 1.0), 0.0, 11.0) == 6.0  # the station's
