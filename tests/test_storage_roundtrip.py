"""A synthetic event stream stored by RunWriter comes back from load_run unchanged."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from app.core.records import PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.storage.codec import decode_flags, encode_flags
from app.storage.opening import open_database
from app.storage.errors import AmbiguousRunIdError, RunNotFoundError
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from app.storage.repository import list_runs, load_run
from app.storage.run_ids import resolve_run_id
from tests.support.stored_runs import LAST_VERDICT, same_verdict, with_steady_verdicts

T0 = 5000.0


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def store(url: str, events: list[ev.RunEvent]) -> None:
    database = open_database(url)
    writer = RunWriter(database)
    for event in events:
        writer(event)
    writer.close()
    database.close()


@pytest.fixture()
def stored(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    events = with_steady_verdicts(list(full_run(T0, samples_per_phase=60,
                                                run_id="3f0c9a2e-run-one")))
    store(url, events)
    database = open_database(url)
    yield database, events, load_run(database, "3f0c9a2e-run-one")
    database.close()


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_run_header_and_config_round_trip(stored) -> None:
    _, events, run = stored
    started = events[0]
    assert run.config == started.config
    assert (run.method_name, run.method_version, run.method_compliant) == ("demo", "1.0", False)
    assert run.status is RunStatus.COMPLETED and run.t0 == T0
    assert run.duration_s == pytest.approx(events[-1].t)
    assert run.started_wall == started.wall_start_iso and run.finished_wall
    assert run.workload_engine == "simulated SUT"
    assert run.power_meter == of(events, ev.InstrumentsIdentified)[0].power_meter
    assert run.temperature_meter.vendor == "Sim"


def test_power_samples_round_trip_with_nan_none_and_flags(stored) -> None:
    _, events, run = stored
    batches = of(events, ev.PowerSamples)
    sent = [(b.phase_index, p) for b in batches for p in b.samples]
    assert len(run.power) == len(sent) == 4 * 60
    for i, (phase, p) in enumerate(sent):
        assert run.power.phase_index[i] == phase
        assert run.power.t[i] == p.t
        for name, value in (("watts", p.watts), ("volts", p.volts), ("amps", p.amps),
                            ("pf", p.pf), ("freq_hz", p.freq_hz)):
            assert same(getattr(run.power, name)[i], value), name
        for name, value in (("range_v", p.range_v), ("range_a", p.range_a),
                            ("uncertainty_pct", p.uncertainty_pct)):
            assert same(getattr(run.power, name)[i], math.nan if value is None else value)
        assert run.power.flags[i] == p.flags
    assert list(run.power.usable) == [p.usable for _, p in sent]
    assert not run.power.t.flags.writeable


def test_results_round_trip(stored) -> None:
    _, events, run = stored
    sent_intervals = [e.interval for e in of(events, ev.IntervalClosed)]
    assert len(run.intervals) == len(sent_intervals)
    for got, want in zip(run.intervals, sent_intervals):
        for field in want.__dataclass_fields__:
            a, b = getattr(got, field), getattr(want, field)
            assert same(a, b) if isinstance(b, float) else a == b, field
    histogram = of(events, ev.HistogramReady)[0]
    assert run.histograms[0].bins == histogram.bins
    assert run.histograms[0].confidence_ms[90.0] == 1.5
    assert run.histograms[0].confidence_ms[99.9] is None  # no value: a level not shown
    assert run.search_results == tuple(of(events, ev.SearchResult))
    # RunFinished repeats the metrics: stored once each, in announcement order
    assert [m.name for m in run.metrics] == ["EP_RR", "EP_RI"]
    assert run.metric("EP_RR") == of(events, ev.MetricComputed)[0].metric
    ri = run.metric("EP_RI")
    assert not ri.valid and ri.reason == "power not stable" and math.isnan(ri.value)
    logs = of(events, ev.LogMessage)
    assert [(e.t, e.level, e.message, e.phase_index) for e in run.events] == [
        (m.t, m.level, m.message, m.phase_index) for m in logs]


def test_phases_and_workload_round_trip(stored) -> None:
    _, events, run = stored
    assert [p.info for p in run.phases] == list(events[0].phases)
    assert all(p.status is PhaseStatus.COMPLETED for p in run.phases)
    restarted = run.phase(1)
    assert restarted.attempts == 2 and restarted.error == ""
    # the PTS steady-state verdict: the restart cleared the first attempt's, the second's
    # came back with its NaN figures (revision 0020); no other phase has one
    assert same_verdict(restarted.steady_state, LAST_VERDICT)
    assert [p.steady_state for p in run.phases if p.index != 1] == [None, None]
    last_start = [e for e in of(events, ev.PhaseStarted) if e.phase.index == 1][-1]
    assert restarted.t_start == last_start.t
    finished = [e for e in of(events, ev.PhaseFinished) if e.status is PhaseStatus.COMPLETED]
    assert [p.workload for p in run.phases] == [e.workload for e in finished]
    assert run.job_files == {0: "[MW1]\nrw=randrw\n", 1: "[RR]\nrw=randrw\n"}
    sent = [(b.phase_index, w) for b in of(events, ev.WorkloadIntervals) for w in b.intervals]
    assert len(run.workload) == len(sent)
    for got, (phase, w) in zip(run.workload, sent):
        assert got.phase_index == phase and got.interval.host == w.host
        assert (got.interval.t_start, got.interval.t_end) == (w.t_start, w.t_end)
        assert got.interval.ios == w.ios and same(got.interval.avg_resp_ms, w.avg_resp_ms)
    temps = [t for b in of(events, ev.TemperatureSamples) for t in b.samples]
    assert np.array_equal(run.temperature.t, [t.t for t in temps])
    assert list(run.temperature.usable) == [t.usable for t in temps]


def test_samples_digest_is_stable_and_sensitive(stored, tmp_path: Path) -> None:
    database, events, run = stored
    assert load_run(database, run.run_id).samples_sha256 == run.samples_sha256
    other = f"sqlite:///{tmp_path / 'other.db'}"
    store(other, events)  # same samples in another database → same digest
    changed = [ev.PowerSamples(e.phase_index, e.samples[:-1], e.placements[:-1])
               if isinstance(e, ev.PowerSamples)
               else e for e in events]
    changed_url = f"sqlite:///{tmp_path / 'changed.db'}"
    store(changed_url, changed)
    assert load_run(open_database(other), run.run_id).samples_sha256 == run.samples_sha256
    assert load_run(open_database(changed_url), run.run_id).samples_sha256 != run.samples_sha256


def test_list_runs_and_id_prefixes(stored, tmp_path: Path) -> None:
    database, _, run = stored
    store(database.url, list(full_run(T0, 2, run_id="3f0c9a2e-run-two")))
    store(database.url, list(full_run(T0, 2, run_id="77aa-run-three")))
    assert len(list_runs(database)) == 3
    assert [r.run_id for r in list_runs(database, status="COMPLETED", limit=1)]
    assert list_runs(database, status="FAILED") == []
    assert resolve_run_id(database, "77") == "77aa-run-three"
    with pytest.raises(AmbiguousRunIdError, match="several runs"):
        load_run(database, "3f0c")
    with pytest.raises(RunNotFoundError, match="no stored run"):
        load_run(database, "nope")
    with pytest.raises(RunNotFoundError):
        resolve_run_id(database, "%")  # LIKE wildcards are literal


@pytest.mark.parametrize("flags", [frozenset(), frozenset({"overrange", "no_data"}),
                                   frozenset({"invalid", "brand_new_flag"})])
def test_flag_codes_are_lossless(flags: frozenset[str]) -> None:
    code = encode_flags(flags)
    assert decode_flags(code) == flags
    assert code is None or len(code) <= 20


def test_attempts_and_placements_round_trip(stored) -> None:
    """Every attempt is a row, and every sample and slice keeps the tags it was sent with."""
    _, events, run = stored
    phase1 = [(a.attempt, a.status) for a in run.attempts if a.phase_index == 1]
    assert phase1 == [(1, PhaseStatus.ABORTED), (2, PhaseStatus.COMPLETED)]
    assert run.last_attempt(1).attempt == 2 and run.last_attempts()[1] == 2
    placed = [p for b in of(events, ev.PowerSamples) for p in b.placements]
    assert run.power.attempt.tolist() == [p.attempt for p in placed]
    assert run.power.interval.tolist() == [p.interval for p in placed]
    assert run.power.window.tolist() == [int(p.window) for p in placed]
    sent = [(b.attempt, w) for b in of(events, ev.WorkloadIntervals) for w in b.windows]
    assert [(w.attempt, w.window) for w in run.workload] == sent
    assert {r.attempt for r in run.attempt_intervals(1)} == {2}
