"""While a run samples, the interpreter hands over between threads every millisecond, not every
5 ms (issue 27: a sampler woken on time waited for the run writer or the load hosts' readers to
hand the interpreter over; ``app/sequencer/switching.py``)."""

from __future__ import annotations

import sys
import threading

from app.sequencer.switching import SAMPLING_SWITCH_INTERVAL_S, sampling_switch_interval
from drivers.interfaces import PowerSample
from drivers.simulators.direct_meters import SimulatedPowerMeter
from tests.support.sequencer_runs import run_short_sequence


def test_a_run_samples_with_a_1_ms_switch_interval_and_gives_the_old_one_back() -> None:
    before = sys.getswitchinterval()
    assert before > SAMPLING_SWITCH_INTERVAL_S  # CPython's 5 ms
    seen: set[float] = set()

    class Watched(SimulatedPowerMeter):
        """The simulated meter, noting the switch interval at each reading."""

        def read(self, t: float) -> PowerSample:
            seen.add(sys.getswitchinterval())
            return super().read(t)

    run_short_sequence("smoke", power=Watched)
    assert seen == {SAMPLING_SWITCH_INTERVAL_S}
    assert sys.getswitchinterval() == before


def test_the_interval_is_given_back_when_the_last_of_two_overlapping_runs_ends() -> None:
    before = sys.getswitchinterval()
    first_in, second_out = threading.Event(), threading.Event()
    during: list[float] = []

    def first() -> None:
        with sampling_switch_interval():
            first_in.set()
            second_out.wait(5)
            during.append(sys.getswitchinterval())  # the second ended: still a run on

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait(5)
    with sampling_switch_interval():
        pass
    second_out.set()
    worker.join(5)
    assert during == [SAMPLING_SWITCH_INTERVAL_S]
    assert sys.getswitchinterval() == before
