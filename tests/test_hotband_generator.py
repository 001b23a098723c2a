"""The hot band as the mandated generator draws it, and a load generator that is never the
bottleneck (docs/method-notes.md §2): the in-band curve and its fio zones, the per-stream rate
caps that replace fio's throttling ``flow`` weights, the null-engine ceiling and the rule that
turns a figure too close to it into "load generator limit reached". All without a process;
the real-fio proofs are in tests/test_fio_access_patterns.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.method.loader import MethodError, load_method, load_method_file
from app.sequencer.search import LOAD_GENERATOR_LIMIT, choose_intensity, generator_note
from drivers.fio import jobs
from drivers.fio.ceiling import ceiling_from_reports, null_engine_text
from drivers.fio.hotband_curve import curve_zones
from drivers.fio.access_log import share_below
from tests.support.fio_access import zone_share_below
from drivers.fio.jobs import JobOptions, job_text
from drivers.interfaces import GeneratorCeiling, WorkloadError
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.fio_rate import FLOW_THROTTLED_IOPS, generator_rate
from drivers.simulators.sut import SimulatedSut
from drivers.clock import FakeClock

GB = 1_000_000_000
#: the reference shares in the first 0.1 / 1 / 10 / 50 % of a band (method-notes §2)
REFERENCE = {80_000_000: (14.0, 30.5, 48.2, 75.6), 800 * GB: (66.4, 73.3, 78.1, None)}
POINTS = (0.001, 0.01, 0.1, 0.5)


def hotband_at(step: int, method: str = "emerald-block-v3"):
    m = load_method(method)
    return m.profile("HOTBAND").at_intensity(m.search, step, 2.0, "active")


@pytest.mark.parametrize("band", sorted(REFERENCE))
def test_the_curve_gives_the_reference_generator_s_shares(band: int) -> None:
    for x, want in zip(POINTS, REFERENCE[band]):
        if want is not None:  # the reference drew 10^6 IOs: its figures carry ~0.3 point
            assert abs(100 * share_below(x * band, band) - want) < 0.4, (band, x)


def test_writes_land_one_percent_of_the_band_later() -> None:
    band, shift = 80_000_000, 800_000
    for x in (0.001, 0.1, 0.5):
        reads = share_below(x * band, band)
        writes = (share_below(x * band + shift, band, write=True)
                  - share_below(shift, band, write=True))
        assert abs(writes - reads) < 1e-9
    assert share_below(shift, band, write=True) < 0.005  # only the wrapped tail lands there


@pytest.mark.parametrize("band, block", [(79_994_880, 8192), (800 * GB // 8192 * 8192, 8192),
                                         (64 * 2**20, 262144)])
def test_fio_zones_are_whole_percents_that_follow_the_curve_within_one_point(
        band: int, block: int) -> None:
    for write in (False, True):
        zones = curve_zones(band, block, write)
        assert sum(p for p, _ in zones) == 100 and all(p >= 0 for p, _ in zones)
        assert sum(size for _, size in zones) == band
        assert all(size % block == 0 and size > 0 for _, size in zones)
        # offsets are whole blocks in both generators: compare at block edges
        blocks = band // block
        edges = sorted({max(1, blocks * k // 1000) * block for k in range(1000)})
        worst = max(abs(zone_share_below(zones, x) - share_below(x, band, write))
                    for x in edges)
        assert worst <= 0.01 + 1e-9, worst


def test_the_hot_band_job_holds_shares_by_rate_caps_and_its_bands_by_the_curve() -> None:
    text = job_text(hotband_at(100), JobOptions(("/dev/sdz",), "libaio", True, span=GB))
    assert "flow" not in text  # fio's flow weights throttle fio itself
    sections = [line[1:-1] for line in text.splitlines() if line.startswith("[")][1:]
    assert len(sections) == 17 and "HOTBAND-hot1-read" in sections
    hot1 = text.split("[HOTBAND-hot1-read]")[1].split("\n[")[0]
    # 100 × 1000 IOPS in all: hot1 takes 28 %, its reads 70 % of that
    assert "rate_iops=19600,0" in hot1 and "rw=randread" in hot1
    assert "random_distribution=zoned_abs:" in hot1
    uniform = text.split("[HOTBAND-uniform]")[1].split("\n[")[0]
    assert "random_distribution" not in uniform and "rate_iops=3000,3000" in uniform


def test_a_curved_band_needs_the_target_s_size() -> None:
    with pytest.raises(WorkloadError, match="needs the target's size in bytes"):
        job_text(hotband_at(4), JobOptions(("/dev/sdz",), "libaio", True))


def test_a_multi_stream_profile_without_a_total_rate_is_refused() -> None:
    with pytest.raises(WorkloadError, match="needs a total rate_iops"):
        job_text(replace(hotband_at(4), rate_iops=None), JobOptions(("/x",), span=GB))


def test_the_curve_is_for_random_streams_only(tmp_path: Path) -> None:
    base = Path(__file__).parents[1] / "resources" / "methods" / "emerald-block-v3.toml"
    text = base.read_text(encoding="utf-8").replace(
        'pattern = "sequential", block_size_kib = 256 },',
        'pattern = "sequential", block_size_kib = 256, '
        'distribution = "reference-hotband-curve" },', 1)
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(MethodError, match="a sequential stream has none"):
        load_method_file(bad)


def test_the_search_probes_a_multi_stream_profile_by_total_rate() -> None:
    m = load_method("emerald-block-v3")
    work = hotband_at(16)
    assert sum(work.rate_iops or ()) == 16_000 and work.queue_depth == m.search.queue_depths[-1]
    plain = m.profile("MW1").at_intensity(m.search, 16, 2.0, "search")
    assert plain.queue_depth == 16 and plain.rate_iops is None


def _ceiling(step: int, iops: float, asked: float | None = None,
             error: float = 0.0) -> GeneratorCeiling:
    return GeneratorCeiling("P", step, iops, iops * 8192 / 2**20, asked, error, 2.0)


def test_a_figure_above_half_the_generator_s_ceiling_is_the_generator_s() -> None:
    ceilings = (_ceiling(1, 50_000), _ceiling(16, 400_000))
    assert generator_note((16, 150_000, 2.0), "IOPS", ceilings, 50) == ""
    note = generator_note((16, 250_000, 2.0), "IOPS", ceilings, 50)
    assert note.startswith(LOAD_GENERATOR_LIMIT) and "400000.0 IOPS fio alone" in note
    # a refined step between two listed ones is judged against the next listed step up
    assert generator_note((8, 30_000, 2.0), "IOPS", ceilings, 50) == ""
    probes = [(1, 26_000.0, 0.5), (16, 210_000.0, 40.0)]
    result = choose_intensity("MW1", probes, True, "IOPS", 1, 30.0, 5.0, 2, ceilings, 50)
    assert result.note.startswith(LOAD_GENERATOR_LIMIT) and result.generator == ceilings


def test_a_capped_job_fio_cannot_hold_at_twice_the_rate_is_the_generator_s_limit() -> None:
    held = (_ceiling(4, 7_950, asked=8_000, error=0.1),)
    assert generator_note((4, 3_900, 2.0), "IOPS", held, 50) == ""
    throttled = (_ceiling(4, 600, asked=8_000, error=0.1),)
    assert "600 of 8000 IOPS asked" in generator_note((4, 3_900, 2.0), "IOPS", throttled, 50)
    skewed = (_ceiling(4, 7_950, asked=8_000, error=8.1),)
    assert "off by up to 8.10 points" in generator_note((4, 3_900, 2.0), "IOPS", skewed, 50)


def test_the_null_engine_run_keeps_the_pattern_and_drops_the_io() -> None:
    text = null_engine_text(job_text(hotband_at(4), JobOptions(("/dev/sdz",), "libaio", True,
                                                               span=GB)))
    assert "ioengine=null" in text and "direct=0" in text and "group_reporting=0" in text
    assert "libaio" not in text and "random_distribution=zoned_abs:" in text


def test_the_ceiling_counts_each_stream_over_its_sections() -> None:
    work = hotband_at(4)
    names = [line[1:-1] for line in job_text(work, JobOptions(("/x",), span=GB)).splitlines()
             if line.startswith("[")][1:]
    share = {s[0]: s[3] for s in work.streams}
    jobs_ = []
    for name in names:
        stream = name.split("-")[1]
        parts = 2 if stream in work.curved_streams else 1
        ios = round(share[stream] * 100 / parts)
        jobs_.append({"jobname": name, "job_runtime": 2000,
                      "read": {"total_ios": ios, "io_bytes": ios * 8192},
                      "write": {"total_ios": 0, "io_bytes": 0}})
    jobs_[0]["read"]["total_ios"] += 100  # write1 one point over its 5 %
    found = ceiling_from_reports([json.loads(json.dumps({"jobs": jobs_}))], work, 4, 2.0)
    assert found.asked_iops == 4000 and found.iops == pytest.approx(10_100 / 2)
    assert found.share_error_pts == pytest.approx(100 * 600 / 10_100 - 5, abs=1e-3)


def test_the_simulated_generator_is_throttled_by_flow_as_fio_is(monkeypatch) -> None:
    """A job file whose streams share fio's flow counter ran at ~600 IOPS on the null engine:
    the simulated lab shows it, so a throttled generator cannot hide there again."""
    engine = SimulatedWorkloadEngine(SimulatedSut(), FakeClock(0.0))
    work = hotband_at(8)
    assert engine.generator_ceiling(work, 4).kept_up()
    real = jobs.stream_rate
    monkeypatch.setattr(jobs, "stream_rate", lambda *a: ["flow=280", "flow_id=1"]
                        if a[1] else real(*a))
    throttled = engine.generator_ceiling(work, 4)
    assert throttled.iops == FLOW_THROTTLED_IOPS and not throttled.kept_up()
    assert generator_rate([job_text(work, JobOptions(("/x",), span=GB))]) == FLOW_THROTTLED_IOPS


def test_a_rate_step_search_names_its_steps_as_rates_not_queue_depths() -> None:
    """A multi-stream profile is searched by total rate (method-notes §2): its notes and its
    re-check say "rate step N: X IOPS asked", never "queue depth"."""
    from app.sequencer.search import recheck
    rate_of = lambda step: step * 1000  # noqa: E731 - the search's stream_rate, in all
    probes = [(1, 990.0, 5.0), (2, 1700.0, 40.0)]
    found = choose_intensity("HOTBAND", probes, True, "IOPS", 1, 30.0, 5.0, 2, rate_of=rate_of)
    assert found.note == ("no whole rate step left between the probes: 5.0 ms at rate step 1: "
                          "1000 IOPS asked and 40.0 ms at rate step 2: 2000 IOPS asked, not "
                          "within 5 % of the 30 ms limit")
    deeper = choose_intensity("HOTBAND", probes[:1], True, "IOPS", 1, 30.0, 5.0, 1,
                              rate_of=rate_of)
    assert "the deepest probe (rate step 1: 1000 IOPS asked) gave 5.0 ms" in deeper.note
    again = recheck(replace(found, queue_depth=2), 1700.0, 40.0, 30.0, rate_of)
    assert again.retry is not None and "queue depth" not in again.message + again.retry.note
    assert again.retry.note.endswith("at rate step 2: 2000 IOPS asked; re-refined to rate "
                                     "step 1: 1000 IOPS asked")
    # a profile searched by queue depth keeps its words
    assert "queue depth 1 × 1 job(s)" in choose_intensity("MW1", probes[:1], True, "IOPS", 1,
                                                          30.0, 5.0, 1).note


def test_a_hot_band_pattern_off_its_streams_is_named_stream_by_stream() -> None:
    """The pre-run's judge on a hot band (app/sequencer/access_check.py): the modelled pattern is
    the
    method's; a stream 0.6 point over its share, a band 4 points off the curve in a log of
    60,000 IOs, or a band's offsets past its slice are each named with the figure."""
    from app.sequencer.access_check import pattern_departures
    from drivers.fio.access_log import modelled_pattern
    profile = load_method("emerald-block-v3").profile("HOTBAND")
    work = profile.at_intensity(load_method("emerald-block-v3").search, 60, 1.0, "generator")
    asked = replace(modelled_pattern(work, 10**12), ios=60_000)
    assert pattern_departures(asked, profile) == []
    hot1 = next(s for s in asked.streams if s.name == "hot1")
    x, _m, ref = hot1.curve[2]
    off = replace(hot1, share_pct=28.6, curve=(*hot1.curve[:2], (x, ref - 4, ref)),
                  high_pct=18.5)
    found = pattern_departures(replace(asked, streams=tuple(
        off if s.name == "hot1" else s for s in asked.streams)), profile)
    assert found == [
        "stream hot1: 28.60 % of the IOs, asked 28 % (±0.5 point)",
        "stream hot1: offsets over 10.000–18.500 % of the range, asked 10–18 %",
        f"stream hot1: {ref - 4:.1f} % of the band's reads in its first {x:g} %, the reference "
        f"curve {ref:.1f} % (±3.2 points: 2 and the log's 3 σ)"]  # 3 σ of 11,760 reads


def test_mw2_is_pre_run_at_its_derived_rate_and_judged_by_the_generator_rule() -> None:
    """Issue 30: MW2 is not searched (its rate derives from MW1's measurement), yet its own
    job file runs on the null engine just before its phase: the ceiling check at twice the
    derived rate, the pattern judged against MW2's definition. A generator that cannot hold
    it makes the row say "load generator limit reached", as a search would."""
    from app.sequencer import events as ev
    from tests.support.sequencer_runs import make_run
    seq, rec, _clock = make_run("demo")
    real = seq.lab.engine.generator_ceiling

    def throttled(profile, step):  # fio alone holding only half of MW2's check rate
        found = real(profile, step)
        return replace(found, iops=found.iops / 2) if profile.name == "MW2" else found
    seq.lab.engine.generator_ceiling = throttled
    assert seq.run().value == "COMPLETED", seq.error
    mw2 = [r for r in rec.of(ev.SearchResult) if r.profile == "MW2"]
    assert len(mw2) == 1 and not mw2[0].searched and "MW1" in (mw2[0].pre_run_basis or "")
    (ceiling,) = mw2[0].generator
    assert mw2[0].rate_iops and ceiling.asked_iops == 2 * sum(mw2[0].rate_iops)
    assert mw2[0].pattern is not None and mw2[0].pattern.read_pct == 70.0
    assert mw2[0].ops_rate == rec.metric("EP_MW2").ops_rate
    assert mw2[0].note.startswith(LOAD_GENERATOR_LIMIT), mw2[0].note
    assert "MW2" not in seq.search  # never taken for a searched intensity (re-check, resume)
    from app.rules.compliance import GENERATOR, INTENSITY, _intensity, _pre_run_generator

    class Facts:
        search_results = tuple(rec.of(ev.SearchResult))
    (limit,) = _pre_run_generator(Facts())
    assert limit.name == GENERATOR and not limit.met and limit.evidence.startswith("MW2: ")
    assert "MW2" not in _intensity(Facts()).evidence and _intensity(Facts()).name == INTENSITY


def test_a_re_check_retry_keeps_its_profile_s_pre_run() -> None:
    """Issue 30: a profile restarted by its intensity re-check (also after a resume, which
    re-checks from the stored row) keeps the ceiling and pattern of its job file's null-engine
    pre-run: the retry row carries them instead of dropping them."""
    from app.sequencer.search import recheck
    from drivers.fio.access_log import modelled_pattern
    method = load_method("demo")
    work = method.profile("MW1").at_intensity(method.search, 16, 1.0, "generator")
    ceilings = tuple(GeneratorCeiling("MW1", qd, 1e6, 8e3) for qd in (1, 4, 16, 64))
    found = replace(choose_intensity("MW1", [(1, 900.0, 5.0), (4, 3000.0, 20.0),
                                             (16, 7000.0, 29.0)], True, "IOPS", 1, 30.0, 5.0,
                                     4, ceilings),
                    pattern=modelled_pattern(work, 10**12))
    retry = recheck(found, 7000.0, 33.0, 30.0).retry
    assert retry is not None and retry.queue_depth == 10
    assert retry.generator == ceilings and retry.pattern == found.pattern
