"""The report states the SUT's maximum power (issue 24 item 9; a project reading pending
EN 303 804): the highest single usable sample per phase and overall, with its time, beside
the nameplate power of the supplies the SUT description declares."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.metrics.max_power import PeakSample, maximum_power
from app.core.records import PowerSupplies, RunConfig, SutDescription
from app.reports.content import build_content
from app.station.session import open_session
from drivers.clock import FakeClock
from app.storage.repository import load_run


def test_the_highest_usable_sample_per_phase_and_overall() -> None:
    t = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    watts = np.array([500.0, 900.0, 610.0, 650.0, np.nan])
    usable = np.array([True, False, True, True, False])  # the 900 W sample was flagged
    phase = np.array([0, 0, 1, 1, 1])
    overall, phases = maximum_power(t, watts, usable, phase, {0: "MW1", 1: "Ready idle"})
    assert overall == PeakSample("overall", 650.0, 4.0)
    assert phases == (PeakSample("MW1", 500.0, 1.0), PeakSample("Ready idle", 650.0, 4.0))
    assert maximum_power(t, watts, usable & False, phase, {}) == (None, ())


def test_the_report_prints_it_beside_the_supplies_nameplate(tmp_path) -> None:
    sut = replace(SutDescription(), power_supplies=PowerSupplies(2, "1+1", 1600.0))
    session = open_session(RunConfig(method="smoke", lab="sim-direct", sut=sut),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    content = build_content(run)
    power = run.power
    ok = power.usable & np.isfinite(power.watts)
    assert content.peak.watts == float(power.watts[ok].max())
    assert content.peak_line.endswith("; supplies 2 × 1600 W nameplate (1+1) = 3200 W")
    assert {p.where for p in content.phase_peaks} <= {p.info.name for p in run.phases}
