"""A power input named ``main`` is an input like any other (issue 24 item 5): its name used
to equal the single meter's key in the range plan, so the ranging pass took the SUT's total
(no amps) for its reading, recorded 0 A, held the smallest range and every metric was INVALID
over-range, with nothing said."""

from __future__ import annotations

from app.core.records import PowerInput, RunConfig, RunStatus
from app.station.session import open_session
from drivers.clock import FakeClock
from app.storage.repository import load_run


def test_an_input_named_main_is_ranged_on_its_own_reading(tmp_path) -> None:
    inputs = (PowerInput("main", "sim"), PowerInput("psu-b", "sim"))
    session = open_session(RunConfig(method="smoke", lab="sim-direct",
                                     power_inputs=inputs),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    assert session.sequencer.run() is RunStatus.COMPLETED, session.sequencer.error
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    held = run.range_plan.setting("main", "RR")
    assert held.evidence.rms_a > 0.5 and held.amps > held.evidence.rms_a, held
    bad = [(m.name, m.reason) for m in run.metrics if not m.valid]
    assert not bad, bad
