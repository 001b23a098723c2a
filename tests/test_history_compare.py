"""Compare for QA (issue 17, item 12): a warning when the runs used different methods or
variants, histograms overlaid as the share of each run's IOs, metrics in the report's order."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.core.records import METRIC_ORDER
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from ui.history.compare import CompareView
from app.storage.repository import load_run


def _store(database, events) -> str:
    writer = RunWriter(database)
    for event in events:
        writer(event)
    assert writer.flush(10)
    writer.close()
    return events[0].run_id


def _variant(events: list, scale: int = 1, **started) -> list:
    """The synthetic run with another method (``started``) and ``scale`` × more IOs."""
    out = []
    for e in events:
        if isinstance(e, ev.RunStarted):
            e = replace(e, **started)
        elif isinstance(e, ev.HistogramReady):
            e = replace(e, bins={k: v * scale for k, v in e.bins.items()})
        out.append(e)
    return out


@pytest.fixture()
def database(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'c.db'}")
    yield db
    db.close()


def test_runs_of_different_variants_are_compared_under_a_warning(qtbot, database) -> None:
    plain = _store(database, list(full_run()))
    same = _store(database, list(full_run(2000.0)))
    other = _store(database, _variant(list(full_run(3000.0)), method_name="emerald-block-v3",
                                      method_version="3.0", method_compliant=True))
    mixed = CompareView(database, [plain, other])
    qtbot.addWidget(mixed)
    assert not mixed.warning.isHidden()
    # each method with its run's derived verdict (the synthetic runs hold no method record)
    assert "demo 1.0 [method not held by the record] (NON-COMPLIANT)" in mixed.warning.text()
    assert "emerald-block-v3 3.0 [method not held by the record] (NON-COMPLIANT)" \
        in mixed.warning.text()
    alike = CompareView(database, [plain, same])
    qtbot.addWidget(alike)
    assert alike.warning.isHidden() and alike.warning.text() == ""


def test_histograms_are_shares_of_each_runs_ios_and_metrics_in_report_order(qtbot,
                                                                            database) -> None:
    big = _store(database, _variant(list(full_run()), scale=100))
    small = _store(database, list(full_run(2000.0)))
    view = CompareView(database, [big, small])
    qtbot.addWidget(view)
    shares = view.hist_data
    for run_id in (big, small):
        assert np.isclose(shares[run_id][1].sum(), 100.0)  # % of that run's IOs
    # a run with 100× fewer IOs is drawn at the same height, not hidden under the big one
    assert np.isclose(shares[small][1].max(), shares[big][1].max(), rtol=0.05)
    names = [row[0] for row in view.rows()]
    ranked = [n for n in names if n in METRIC_ORDER]
    assert ranked == [n for n in METRIC_ORDER if n in names]
    assert names[:len(ranked)] == ranked  # report metrics first, others (COMs) after


def test_a_com_the_lab_could_not_observe_is_not_verified_in_compare(qtbot, database) -> None:
    """Issue 28: compare said "INVALID (no value)" for a COM check the run's header, the
    start page and the history list call NOT VERIFIED — and after a technician recorded the
    COM's result, compare must show that recorded state, as the run's report does."""
    from app.signoff.revisions import record_com_result
    from app.core.records import MetricResult

    unobserved = ev.MetricComputed(MetricResult(
        "COM_thin-provisioning", float("nan"), "ratio", False,
        "no station check for this COM: record the heuristic result"))
    runs = []
    for t0 in (1000.0, 5000.0):
        events = list(full_run(t0))
        config = events[0].config  # the SUT declares the COM the check ran for
        sut = replace(config.sut, coms_declared=("thin-provisioning",),
                      coms_on_during_test=("thin-provisioning",))
        events = _variant(events, config=replace(config, sut=sut))
        runs.append(_store(database, [*events[:-1], unobserved, events[-1]]))
    record_com_result(database, load_run(database, runs[1]), "thin-provisioning", "passed",
                      "array GUI: pool P1 thin, 4 TiB provisioned on 1 TiB", "Q. A. Engineer")
    compare = CompareView(database, runs)
    qtbot.addWidget(compare)
    rows = {r[0]: r for r in compare.rows()}
    assert rows["COM_thin-provisioning"][2] == "NOT VERIFIED (no value)"
    assert rows["COM_thin-provisioning"][3] == "PASSED"  # the recorded result, not the check's
    assert rows["EP_RI"][2] == "INVALID (no value)"  # a measurement stays INVALID
    assert "1 COM NOT VERIFIED" in compare.legend.text()  # each run's verdict, as its header
