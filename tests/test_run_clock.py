"""The run clock: run-relative time on the station clock, and deadlines that are never missed
by a float rounding (a sampler waiting for ``now >= due`` must wake at or after ``due``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.sequencer.run_clock import RunClock
from drivers.clock import FakeClock


def test_now_is_seconds_since_the_run_start() -> None:
    station = FakeClock(1000.0)
    clock = RunClock(station, station.now())
    station.advance(2.5)
    assert clock.now() == 2.5 and clock.to_run(1001.0) == 1.0


@given(st.floats(1e-3, 1e9), st.floats(0.0, 1e6))
def test_a_sleep_until_a_deadline_wakes_at_or_after_it(t0: float, deadline: float) -> None:
    station = FakeClock(t0)
    clock = RunClock(station, t0)
    clock.sleep_until(deadline)
    assert clock.now() >= deadline


def test_the_case_that_used_to_spin() -> None:
    """1000.4 − 1000.0 is 0.39999999999997726: without rounding up, a sampler due at 0.4
    would sleep until 1000.4 and find itself still not due, forever."""
    station = FakeClock(1000.0)
    clock = RunClock(station, 1000.0)
    clock.sleep_until(0.4)
    assert clock.now() >= 0.4
