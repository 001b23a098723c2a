"""Load hosts' live display rates from the engine through the sequencer to the run view's IO
plot, replaced by the counted figures when the phase ends (issue 16, item 6)."""

from __future__ import annotations

import pytest

from app.method.loader import load_method
from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.labs.simulated import simulated_sut
from app.storage.opening import open_database
from app.storage.writer import RunWriter, WriterError
from drivers.clock import FakeClock
from drivers.interfaces import HostRate, WorkloadInterval
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from tests.support.sequencer_runs import Recorder
from tests.support.plot_events import started, workload
from ui.plots.live import LivePlots
from ui.plots.live_rates import LIVE_NOTE
from app.storage.repository import load_run


class HostRatesEngine(SimulatedWorkloadEngine):
    """The simulated engine, also showing one display rate per poll as a load host would."""

    def live_rates(self) -> list[HostRate]:
        return [HostRate("10.0.0.1:8765", self.clock.now(), 700, 300, 2800, 1200)]


def test_the_sequencer_publishes_display_rates_in_run_time_and_never_stores_them(
        tmp_path) -> None:
    clock = FakeClock()
    config = RunConfig(method="demo", taxonomy="online-3", lab="sim-direct")
    sut = simulated_sut(config)
    lab = Lab(SimulatedPowerMeter(sut), HostRatesEngine(sut, clock), SimulatedThermometer(sut),
              sut.used_capacity_bytes)
    database = open_database(f"sqlite:///{tmp_path / 'run.db'}")
    writer, rec = RunWriter(database, journal_dir=tmp_path), Recorder()
    seq = Sequencer(load_method("demo"), config, lab, clock, [writer, rec])
    assert seq.run() is RunStatus.COMPLETED
    writer.close()  # raises if an event could be neither stored nor journaled
    spans = {}
    for e in rec.events:
        if isinstance(e, ev.PhaseStarted):
            spans[e.phase.index] = [e.t, None]
        elif isinstance(e, ev.PhaseFinished):
            spans[e.phase.index][1] = e.t
    shown = rec.of(ev.HostRates)
    assert shown and {r.host for e in shown for r in e.rates} == {"10.0.0.1:8765"}
    for e in shown:
        lo, hi = spans[e.phase_index]
        assert all(lo <= r.t <= hi for r in e.rates)  # run time, inside its phase
    assert {e.phase_index for e in shown} == {e.phase_index for e in rec.of(ev.WorkloadIntervals)}
    assert load_run(database, seq.run_id).intervals  # the run is stored as before
    writer(shown[0])  # display rates are dropped, not queued: no error even once closed
    with pytest.raises(WriterError):
        writer(ev.LogMessage("INFO", "x", 0.0))


def test_live_rates_show_until_the_counted_figures_replace_them(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))
    a, b = "10.0.0.1:8765", "10.0.0.2:8765"
    plots.ingest([ev.HostRates(0, (HostRate(a, 1.0, 350, 150, 1400, 600),
                                   HostRate(b, 1.1, 2000, 0, 8000, 0))),
                  ev.HostRates(0, (HostRate(a, 2.0, 349, 150, 1396, 600),))])
    plots.redraw()
    x, y = plots.live_rates.curves[f"iops@{a}"].getOriginalDataset()
    assert list(x) == [1.0, 2.0] and list(y) == [500, 499]
    assert list(plots.live_rates.curves[f"iops@{b}"].getOriginalDataset()[1]) == [2000]
    title = plots.ops_widget.getPlotItem().titleLabel.text
    assert a in title and b in title and LIVE_NOTE in title
    assert plots.curve_data(f"iops@{a}")[1].size == 0  # nothing counted yet
    plots.ingest([workload(0, WorkloadInterval(0.5, 1.5, 500, 0, 500 * 4096, 0, 1.0, 2.0,
                                               host=a))])
    plots.redraw()
    assert plots.live_rates.curves[f"iops@{a}"].getOriginalDataset()[1] is None or \
        len(plots.live_rates.curves[f"iops@{a}"].getOriginalDataset()[1]) == 0
    assert plots.curve_data(f"iops@{a}")[1].tolist() == [500]
    assert LIVE_NOTE in plots.ops_widget.getPlotItem().titleLabel.text  # b still live
    plots.ingest([workload(0, WorkloadInterval(0.5, 1.5, 2000, 0, 0, 0, 1.0, 2.0, host=b))])
    plots.redraw()
    assert LIVE_NOTE not in plots.ops_widget.getPlotItem().titleLabel.text
    plots.start_run(started(), load_method("smoke"))
    assert not plots.live_rates.curves
