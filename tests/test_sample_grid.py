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
from tests.support.sequences import COMPLIANT, assert_all_valid, run

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
