"""A piece of the lab that fails to close at the end of a run is reported, not swallowed
(issue 31: "Teardown failures are swallowed silently").

Before, ``Teardown.run`` passed over every failing step: a meter's session left open, fio's job
folder left behind, said nothing anywhere. Now each failure is a ``TeardownFailed`` event of the
run: stored in the run's log, printed by the console, shown in the GUI's event log
(``tests/test_ui_event_log.py``).
"""

from __future__ import annotations

import io
import json

import pytest

from app.cli.console import ConsoleReporter
from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.event_codec import event_from_json, event_to_json
from drivers.clock import FakeClock
from drivers.interfaces import InstrumentError
from drivers.meters.ptd import PTDPower
from drivers.simulators import MeterSimulator
from tests.support.sequencer_runs import make_run
from app.storage.repository import load_run

STUCK = "PTDaemon at 127.0.0.1:8888 did not answer Stop within 2 s"


def _stuck_close() -> None:
    raise InstrumentError(STUCK)


def test_a_failing_teardown_is_stored_with_the_run_and_printed_by_the_console(
        tmp_path) -> None:
    out = io.StringIO()
    console = ConsoleReporter(out, quiet=True)  # quiet still prints it: the next run needs it
    session = open_session(RunConfig(method="smoke", lab="sim-direct"),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock(),
                           listeners=[console])
    seen: list[ev.RunEvent] = []
    session.sequencer.listeners.append(seen.append)
    session.lab.teardown.register(_stuck_close, "power meter")
    closed_after: list[str] = []  # registered first: closed last, although the meter failed
    session.lab.teardown.register(lambda: closed_after.append("closed"), "fio engine")
    session.lab.teardown.register(_stuck_close, "power meter")
    assert session.run() is RunStatus.COMPLETED  # the figures stand; the failure is told
    failed = [e for e in seen if isinstance(e, ev.TeardownFailed)]
    assert [(e.component, e.error) for e in failed] == [("power meter", STUCK)] * 2
    assert closed_after == ["closed"]
    # the lab closes after the last phase and before the run's end is published: a finished
    # run takes no more rows (issue 39's guard), so its tear-down is part of the run
    order = [type(e) for e in seen if isinstance(e, (ev.TeardownFailed, ev.RunFinished))]
    assert order == [ev.TeardownFailed, ev.TeardownFailed, ev.RunFinished]
    last_phase = max(e.t for e in seen if isinstance(e, ev.PhaseFinished))
    assert failed[0].t >= last_phase
    lines = out.getvalue().splitlines()
    expected = f"WARNING: teardown of the power meter failed: {STUCK}"
    assert sum(expected in line for line in lines) == 2, lines
    console.print_final("stored")
    assert out.getvalue().splitlines()[-1].startswith("Run finished: COMPLETED")
    stored = load_run(session.database, session.run_id)
    session.database.close()
    logged = [(e.level, e.message) for e in stored.events if "teardown" in e.message]
    assert logged == [("WARNING", f"teardown of the power meter failed: {STUCK}")] * 2
    assert stored.status is RunStatus.COMPLETED
    # journaled like every stored event: a run kept in its journal keeps it too
    text = json.dumps(event_to_json(failed[0]), allow_nan=False)
    assert event_from_json(json.loads(text)) == failed[0]


def test_a_ptdaemon_that_drops_stop_at_close_is_closed_and_says_so() -> None:
    """PTDaemon's ``Stop`` unanswered at close: the daemon may go on logging. The session is
    closed all the same, and the error reaches the lab's teardown instead of vanishing."""
    with MeterSimulator("ptd") as sim:
        meter = PTDPower(sim.resource, timeout_s=1.0, reconnect_attempts=1,
                         reconnect_delay_s=0.01)
        meter.open()
        sim.faults.inject("drop")
        with pytest.raises(InstrumentError):
            meter.close()
        assert meter._transport is None
        meter.close()  # closed: nothing left to say


def test_a_workload_engine_that_does_not_stop_at_the_end_is_a_teardown_failure() -> None:
    """It was a WARNING line of the log: now the same event as every piece that fails to
    close, before the run's final status."""
    seq, rec, _clock = make_run("demo")
    engine = seq.lab.engine

    def stuck() -> None:
        raise OSError("fio did not exit after SIGKILL")

    aborted: list[bool] = []

    def abort_mid_phase(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PowerSamples) and engine.running and not aborted:
            aborted.append(True)
            engine.stop = stuck
            seq.abort("the operator stopped the run")

    rec.hooks.append(abort_mid_phase)
    assert seq.run() is RunStatus.ABORTED
    assert [type(e) for e in rec.events[-2:]] == [ev.TeardownFailed, ev.RunFinished]
    assert rec.events[-2].describe() == ("teardown of the workload engine failed: unexpected "
                                         "error OSError: fio did not exit after SIGKILL")
