"""The run record is the one authority for every figure: stored = reported = recomputed.

The recomputation here is written apart from the production code on purpose: it selects raw
stored samples and workload slices by *time* (the attempt's stored start and measurement
window), not by the placement tags the recorder wrote, and averages them with plain Python.
If the recorder, the tags or a report ever drift from the method's arithmetic, one of these
three disagrees.
"""

from __future__ import annotations

import math

import pytest

from app.method.loader import MethodError
from app.method.record import method_sha256
from app.core.records import PhaseKind, Window
from app.reports import content as content_module
from app.reports.content import build_content
from app.storage.stored import StoredRun
from app.storage.repository import load_run
REL = 1e-9


@pytest.fixture(scope="module")
def run(recorded_demo_paused) -> StoredRun:
    return load_run(recorded_demo_paused.database, recorded_demo_paused.run_id)


def mean_power(run: StoredRun, phase: int, start: float, end: float, after: float) -> float:
    """Plain mean of the usable samples of ``phase`` with start <= t < end, t >= after."""
    p = run.power
    values = [float(p.watts[i]) for i in range(len(p))
              if p.phase_index[i] == phase and after <= p.t[i] and start <= p.t[i] < end
              and p.usable[i]]
    return math.fsum(values) / len(values)


def operations(run: StoredRun, phase: int, start: float, end: float, attempt: int,
               unit: str) -> float:
    """IOs (IOPS profiles) or MiB (MiB/s profiles) of the slices, each counted for the share
    of it inside [start, end)."""
    total = 0.0
    for stored in run.workload:
        s = stored.interval
        if stored.phase_index != phase or stored.attempt != attempt:
            continue
        share = max(0.0, min(s.t_end, end) - max(s.t_start, start)) / (s.t_end - s.t_start)
        amount = s.ios if unit == "IOPS" else (s.read_bytes + s.write_bytes) / 2**20
        total += amount * share
    return total


def test_every_metric_recomputes_from_raw_samples(run: StoredRun) -> None:
    content = build_content(run)
    checked = 0
    for metric in run.metrics:
        if not metric.name.startswith("EP_"):
            continue
        attempt = run.last_attempt(metric.phase_index)
        start, end = attempt.window_start_s, attempt.window_end_s
        watts = mean_power(run, metric.phase_index, start, end, attempt.t_start)
        if metric.name == "EP_RI":
            value = run.config.sut.raw_capacity_bytes / 1e9 / watts
        else:
            ops = operations(run, metric.phase_index, start, end, attempt.attempt,
                             metric.ops_unit)
            value = ops / (end - start) / watts
            assert metric.ops_rate == pytest.approx(ops / (end - start), rel=REL)
        assert metric.avg_power_w == pytest.approx(watts, rel=REL), metric.name
        assert metric.value == pytest.approx(value, rel=REL), metric.name
        reported = content.metric_line(metric.name).result
        assert reported.value == metric.value and reported.avg_power_w == metric.avg_power_w
        checked += 1
    assert checked == 7


def test_every_interval_recomputes_from_raw_samples(run: StoredRun) -> None:
    checked = 0
    for phase in run.phases:
        attempt = run.last_attempt(phase.index)
        for record in run.attempt_intervals(phase.index):
            if not record.n_power_samples:
                continue
            watts = mean_power(run, phase.index, record.start_s, record.end_s, attempt.t_start)
            assert record.avg_power_w == pytest.approx(watts, rel=REL)
            if record.ops_unit:
                ops = operations(run, phase.index, record.start_s, record.end_s,
                                 attempt.attempt, record.ops_unit)
                rate = ops / (record.end_s - record.start_s)
                assert record.ops_rate == pytest.approx(rate, rel=REL)
                assert record.ep == pytest.approx(rate / watts, rel=REL)
            checked += 1
    assert checked > 50


def test_tags_select_the_same_samples_as_the_times(run: StoredRun) -> None:
    """The stored placement agrees with the stored bounds for every sample of a last attempt."""
    last = run.last_attempts()
    p = run.power
    for i in range(len(p)):
        phase = int(p.phase_index[i])
        if p.attempt[i] != last.get(phase):
            assert p.window[i] == Window.OUTSIDE or p.attempt[i] < last[phase]
            continue
        attempt = run.last_attempt(phase)
        inside = attempt.window_start_s <= p.t[i] < attempt.window_end_s
        assert (p.window[i] == Window.MEASUREMENT) == inside, (phase, p.t[i])
    rw = next(ph for ph in run.phases if ph.info.profile == "RW")
    assert [a.attempt for a in run.attempts if a.phase_index == rw.index] == [1, 2]
    assert run.phase(rw.index).info.kind is PhaseKind.ACTIVE


def test_the_record_carries_its_method(run: StoredRun, monkeypatch) -> None:
    """Reports read the method the run stored, even when no method file is installed."""
    assert run.method is not None and run.method.name == run.method_name
    assert run.method_sha256 == method_sha256(run.method_json)

    def gone(name: str):
        raise MethodError(f"unknown method {name!r}")

    monkeypatch.setattr(content_module, "load_method", gone)
    content = build_content(run)
    assert content.method == run.method and content.method_note == ""
