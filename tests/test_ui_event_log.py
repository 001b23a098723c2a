"""The run view's event log keeps following new lines through a layout change (issue 28:
"The event log stops following new lines at 1920×1080").

Reproduced on Xvfb at 1920×1080: mid-run, the window lost 200 px of height (restored from
maximized); the log got shorter, the scroll bar's maximum moved past the view, and Qt's rule
(scroll only when at the maximum just before appending) left every later line below the view.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from app.core.records import RunStatus
from app.sequencer import events as ev
from drivers.interfaces import InstrumentError
from tests.support.gui import RUN_TIMEOUT_MS, start_smoke, wait_for_event
from tests.support.time_budget import budget_ms
from ui.run.view import RunView


def _at_end(view: RunView) -> bool:
    bar = view.log.verticalScrollBar()
    return bar.maximum() > 0 and bar.value() == bar.maximum()


def test_the_log_follows_new_lines_after_a_layout_change_until_scrolled_away(
        qtbot, tmp_path) -> None:
    view = RunView(settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(view)
    view.resize(1900, 1000)
    view.show()
    qtbot.waitExposed(view)
    for n in range(60):
        view.append_log("INFO", f"line {n}: conditioning interval {n} EP 1.234 IOPS/W")
    assert _at_end(view)
    tall = view.log.height()
    view.resize(1900, 700)  # the log gets shorter: its end moves below the view
    qtbot.waitUntil(lambda: view.log.height() < tall, timeout=budget_ms(1000))
    view.append_log("INFO", "line after the resize")
    assert _at_end(view), "the log stopped following after a layout change"
    last = view.log.cursorForPosition(view.log.viewport().rect().bottomLeft())
    assert last.block().text().endswith("line after the resize")
    # scrolled up by the technician: new lines do not pull the view away from what they read
    bar = view.log.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    kept = bar.value()
    view.append_log("INFO", "another line")
    view.resize(1900, 650)
    assert bar.value() == kept and not view.log.following
    bar.setValue(bar.maximum())  # back at the end: following again
    view.resize(1900, 600)
    view.append_log("INFO", "the last line")
    assert _at_end(view)
    view.log.clear()  # a new run starts at the end
    assert view.log.following


@pytest.mark.process
def test_a_teardown_failure_is_shown_in_the_event_log(qtbot, station) -> None:
    """A piece of the lab that does not close at the end of a run (issue 31) is a line of
    the log, as stored and printed: the technician checks it before the next run."""
    start_smoke(station)
    view = station.run_view

    def stuck() -> None:
        raise InstrumentError("PTDaemon at 127.0.0.1:8888 did not answer Stop within 2 s")

    view.session.lab.teardown.register(stuck, "power meter")
    wait_for_event(qtbot, station, ev.PowerSamples)
    with qtbot.waitSignal(view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        view.abort("the test has seen enough")
    assert ended.args[0].status is RunStatus.ABORTED
    lines = view.log.toPlainText().splitlines()
    # the lab closes before the run's end is published (a finished run takes no more rows),
    # so the tear-down line comes just before the run's last word
    assert lines[-2:] == ["WARNING teardown of the power meter failed: PTDaemon at "
                          "127.0.0.1:8888 did not answer Stop within 2 s",
                          "WARNING run ABORTED: the test has seen enough"], lines[-3:]
