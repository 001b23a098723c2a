"""A workload slice straddling an interval boundary counts pro rata to its overlap
(app/sequencer/recorder.py, ``PhaseRecorder._window_ops``).

fio reports on its own clock grid (its status interval starts when fio does), so its slices
rarely line up with the method's intervals; the simulated engine's do. Counted whole, a
straddling slice lands in both neighbours and inflates each: only a real-fio test used to
notice. These run the recorder on slices off the grid, in milliseconds.
"""

from __future__ import annotations

import pytest

from app.method.loader import load_method
from app.core.records import PhaseInfo, PhaseKind, SutDescription
from app.sequencer.conformance import SiteRules
from app.sequencer.recorder import PhaseRecorder
from drivers.interfaces import WorkloadInterval

IOPS = 1000.0  # the steady rate every slice carries


def recorder(profile: str = "RR") -> PhaseRecorder:
    method = load_method("smoke")  # 1 s intervals
    phase = PhaseInfo(0, PhaseKind.ACTIVE, profile, profile, 4.0, 0, 4)
    unit = method.profile(profile).ops_unit
    return PhaseRecorder(phase, method, SiteRules.declared(method, SutDescription()), 0.0, 1,
                         unit, live=True)


def steady_slices(edges: list[float], resp_ms: float = 2.0) -> list[WorkloadInterval]:
    """Slices between consecutive ``edges`` at IOPS, 4 KiB reads, ``resp_ms`` each."""
    out = []
    for a, b in zip(edges, edges[1:]):
        ios = round(IOPS * (b - a))
        out.append(WorkloadInterval(a, b, ios, 0, ios * 4096, 0, resp_ms, resp_ms))
    return out


@pytest.mark.parametrize("edges", [
    [0.0, 0.5, 1.5, 2.5, 3.5, 4.0],          # fio's grid half an interval off
    [0.0, 0.3, 1.3, 2.3, 3.3, 4.0],          # … or any other offset
    [0.0, 1.7, 2.2, 4.0],                    # uneven slices, one spanning a whole interval
])
def test_a_steady_rate_on_any_grid_gives_the_same_rate_in_every_interval(edges) -> None:
    rec = recorder()
    rec.add_workload(steady_slices(edges))
    closed = rec.close_due(now=4.0, latency_s=0.0)
    assert [i.index for i in closed] == [0, 1, 2, 3]
    for interval in closed:
        assert interval.ops_rate == pytest.approx(IOPS), (interval.index, interval.ops_rate)


def test_the_straddling_slice_is_split_by_its_overlap() -> None:
    """One slice [0.5, 1.5) of 1000 IOs: 500 belong to interval 0, 500 to interval 1."""
    rec = recorder()
    rec.add_workload([WorkloadInterval(0.0, 0.5, 500, 0, 0, 0, 1.0, 1.0),
                      WorkloadInterval(0.5, 1.5, 1000, 0, 0, 0, 4.0, 4.0),
                      WorkloadInterval(1.5, 2.0, 500, 0, 0, 0, 1.0, 1.0)])
    first, second = rec.close_due(now=2.0, latency_s=0.0)
    assert first.ops_rate == pytest.approx(1000.0) and second.ops_rate == pytest.approx(1000.0)
    # the response time is weighted by the IOs each slice gives the interval: 500 at 1 ms,
    # 500 at 4 ms
    assert first.avg_response_ms == pytest.approx(2.5)


def test_a_mib_per_second_profile_splits_bytes_the_same_way() -> None:
    rec = recorder("SW")
    mib = 2**20
    rec.add_workload([WorkloadInterval(0.0, 0.25, 0, 25, 0, 25 * mib, 1.0, 1.0),
                      WorkloadInterval(0.25, 1.25, 0, 100, 0, 100 * mib, 1.0, 1.0),
                      WorkloadInterval(1.25, 2.0, 0, 75, 0, 75 * mib, 1.0, 1.0)])
    first, second = rec.close_due(now=2.0, latency_s=0.0)
    assert first.ops_unit == "MiB/s"
    assert first.ops_rate == pytest.approx(100.0) and second.ops_rate == pytest.approx(100.0)


def test_an_interval_waits_for_a_late_status_before_it_closes() -> None:
    """fio's status for an interval's last second came later than the lab's expected latency
    on a loaded machine: the interval closed with 0 IOPS while the slice, arriving next, was
    stored — the verifier re-derived 7,718 IOPS from the bundle where the station said 0."""
    rec = recorder()
    rec.add_workload(steady_slices([0.0, 0.6]))  # interval 0's figures: only partly here
    assert rec.close_due(now=2.5, latency_s=1.2, hold_s=10.0) == []  # still on their way
    rec.add_workload(steady_slices([0.6, 1.6]))  # the late status line
    (first,) = rec.close_due(now=2.6, latency_s=1.2, hold_s=10.0)
    assert first.ops_rate == pytest.approx(IOPS)


def test_an_interval_whose_figures_never_come_closes_after_the_hold() -> None:
    rec = recorder()
    assert rec.close_due(now=12.1, latency_s=1.2, hold_s=10.0) == []
    (first,) = rec.close_due(now=12.3, latency_s=1.2, hold_s=10.0)
    assert first.ops_rate == 0.0
