"""A search probe is measured over the time its IO ran, never over a load generator's start-up,
and a probe that measured no IO is refused (docs/fio.md, docs/reliability.md: load host slow
to start IO).

fio in client/server mode takes ~1.5–2 s on loopback (connect, send the job, lay out the file)
before a host's IO starts; the smoke method's 0.5 s probes ended before any IO arrived, the
search chose an intensity from 0 IOPS probes and MW2 failed "rate_iops read 1 cannot be split".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from app.core.records import PhaseKind, PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.sequencer.probe_window import probe_figures
from drivers.interfaces import (GeneratorCeiling, WorkloadError, WorkloadInterval,
                                WorkloadProfile, WorkloadResult)
from tests.support.fio import needs_fio
from tests.support.sequencer_runs import make_run
from app.storage.repository import load_run
@dataclass
class SlowStart:
    """A workload engine whose IO starts ``delay_s`` after ``start()`` (a load host's fio
    client), or never (``delay_s`` = inf); the wrapped engine times the profile from then."""

    inner: object
    clock: object
    delay_s: float
    name: str = "slow-start"
    live: bool = True
    _asked: WorkloadProfile | None = None
    _since: float = 0.0
    started: list[float] = field(default_factory=list)
    profiles: list[WorkloadProfile] = field(default_factory=list)

    def check(self) -> str:
        return self.inner.check()

    @property
    def running(self) -> bool:
        return self._asked is not None or self.inner.running

    def start(self, profile: WorkloadProfile) -> None:
        self._asked, self._since = profile, self.clock.now()
        self.profiles.append(profile)

    def generator_ceiling(self, profile: WorkloadProfile, step: int) -> GeneratorCeiling:
        return self.inner.generator_ceiling(profile, step)

    def access_pattern(self, profile: WorkloadProfile):
        return self.inner.access_pattern(profile)

    def poll(self) -> list[WorkloadInterval]:
        if self._asked is not None and self.clock.now() >= self._since + self.delay_s:
            self.inner.start(self._asked)
            self.started.append(self.clock.now() - self._since)
            self._asked = None
        return self.inner.poll()

    def stop(self) -> WorkloadResult:
        if self._asked is not None:
            self._asked = None
            return WorkloadResult(0, 0, 0, 0, 0.0, engine=self.name)
        return self.inner.stop()


def _slow_run(delay_s: float):
    seq, rec, clock = make_run("smoke")
    seq.lab = replace(seq.lab, engine=SlowStart(seq.lab.engine, clock, delay_s))
    return seq, rec


def test_a_probe_is_timed_from_the_start_of_its_io() -> None:
    seq, rec = _slow_run(1.5)  # smoke probes are 0.5 s: shorter than the start-up
    assert seq.run() is RunStatus.COMPLETED, seq.error
    results = [r for r in rec.of(ev.SearchResult) if r.searched]  # MW2's pre-run is not
    assert len(results) == 5 and all(rate > 0 and not math.isnan(resp)
                           for r in results for _, rate, resp in r.probes), results
    assert seq.lab.engine.started  # the engine really started late
    # MW1's first 1 s interval ends before IO starts: no IO is not a response time over
    # the limit, so the re-check does not lower the intensity for it
    assert any("no IO completed in that interval" in e.message for e in rec.of(ev.LogMessage))


def test_a_probe_that_measured_no_io_is_refused() -> None:
    seq, rec = _slow_run(math.inf)
    assert seq.run() is RunStatus.FAILED
    search = next(e for e in rec.of(ev.PhaseFinished) if e.phase.kind is PhaseKind.SEARCH)
    assert search.status is PhaseStatus.FAILED
    limit = seq.method.search.startup_s
    assert search.error.startswith("probe MW1 at queue depth 1 measured no IO in ")
    assert f"[search] startup_s = {limit:g} s" in search.error
    assert not rec.of(ev.SearchResult)  # no intensity chosen from a zero probe
    assert seq.error == search.error


def test_mw2_derives_from_the_search_when_mw1_measured_no_io() -> None:
    seq, rec = _slow_run(2.5)  # longer than the smoke MW1 phase (2 s): MW1 measures no IO
    assert seq.run() is RunStatus.COMPLETED, seq.error
    assert rec.metric("EP_MW1").ops_rate == 0
    (mw2,) = [p for p in seq.lab.engine.profiles if p.name == "MW2"]
    assert sum(mw2.rate_iops) == pytest.approx(0.25 * seq.search["MW1"].ops_rate, abs=1)
    assert any("MW1 measured no IO" in e.message for e in rec.of(ev.LogMessage))


def _slice(t0: float, t1: float, ios: int, host: str, ms: float = 1.0) -> WorkloadInterval:
    return WorkloadInterval(t0, t1, ios, 0, ios * 4096, 0, ms, ms, {}, host)


def test_probe_figures_add_the_hosts_rates_and_skip_slices_before_io() -> None:
    # two hosts in parallel, each 1000 IOPS over 1 s, one with an empty leading slice
    slices = [_slice(0.0, 1.0, 0, "a"), _slice(1.0, 2.0, 1000, "a", 2.0),
              _slice(1.2, 2.2, 1000, "b", 4.0)]
    qd, rate, resp = probe_figures("MW1", 4, slices, "IOPS", waited_s=2.2, startup_s=10,
                                   probe_s=1.0)
    assert (qd, rate, resp) == (4, pytest.approx(2000.0), pytest.approx(3.0))


def test_probe_figures_refuse_no_io() -> None:
    with pytest.raises(WorkloadError, match=r"probe RR at queue depth 16 measured no IO in "
                                            r"3\.5 s: .*\[search\] startup_s = 2 s"):
        probe_figures("RR", 16, [_slice(0.0, 1.0, 0, "a")], "IOPS", waited_s=3.5, startup_s=2,
                      probe_s=1.0)


@pytest.mark.realtime("real fio servers as load hosts during a real-clock search")
@pytest.mark.process
@needs_fio
def test_smoke_on_two_loopback_load_hosts_searches_with_io(tmp_path: Path,
                                                           two_fio_servers) -> None:
    from app.labs.builder import build_lab
    from app.core.records import RunConfig, SutDescription
    from app.sequencer.sequencer import Sequencer
    from app.method.loader import load_method
    from drivers.clock import MonotonicClock
    from tests.support.sequencer_runs import Recorder
    from tests.support.test_methods import ONE_DEPTH_SMOKE
    # one searched depth: each listed one costs every profile a flat-out generator check and
    # a probe on both hosts (45 s of CPU for two depths)
    config = RunConfig(method=ONE_DEPTH_SMOKE, taxonomy="online-3", lab="local-fio",
                       sut=SutDescription(targets=(str(tmp_path / "scratch.dat"),),
                                          load_hosts=tuple(two_fio_servers)),
                       target_size="16M")
    from app.storage.opening import open_database
    from app.storage.writer import RunWriter
    from tests.support.bundles import assert_verifies
    clock = MonotonicClock()
    method = load_method(ONE_DEPTH_SMOKE)
    lab = build_lab(config, clock)
    rec = Recorder()
    database = open_database(f"sqlite:///{tmp_path / 'hosts.db'}")
    writer = RunWriter(database)
    try:
        seq = Sequencer(method, config, lab, clock, [writer, rec])
        status = seq.run()
    finally:
        lab.close()
        writer.close()
    results = {r.profile: r for r in rec.of(ev.SearchResult) if r.searched}
    assert set(results) == {"MW1", "RW", "RR", "SW", "SR"}, seq.error
    # MW2, not searched, pre-run on both hosts' fio at its derived rate (issue 30)
    (pre_run,) = [r for r in rec.of(ev.SearchResult) if not r.searched]
    assert pre_run.profile == "MW2" and pre_run.generator[0].asked_iops
    assert pre_run.pattern is not None and pre_run.pattern.ios > 0
    for r in results.values():
        assert all(rate > 0 for _, rate, _ in r.probes), r
    mw2 = next(e for e in rec.of(ev.PhaseFinished) if e.phase.name == "MW2")
    assert mw2.status is PhaseStatus.COMPLETED, mw2.error
    assert status is RunStatus.COMPLETED, seq.error
    # the stored run's bundle: per-host slices re-derived by the standalone verifier
    out = assert_verifies(load_run(database, seq.run_id), tmp_path / "hosts.zip")
    assert "[x] EP_MW1: " in out
