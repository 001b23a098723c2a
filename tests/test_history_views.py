"""History view on SQLite and PostgreSQL: filter/sort/search, open a run, compare two runs,
record a QA disposition and prove the run's data did not change."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt

from tests.support import pg_server
from tests.support.time_budget import budget_ms
from tests.support.tamper import guards_lifted
from app.core.records import MetricResult, RunStatus
from app.sequencer import events as ev
from app.storage import schema as s
from app.storage.audit import audit_entries
from app.storage.opening import open_database
from app.storage.history import HistoryFilter
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from app.storage.synthetic import fill_history
from ui.history.view import HistoryView
from app.storage.repository import list_runs, load_run

#: PostgreSQL is a real server process: its half of each test is out of the fast tier
BACKENDS = ["sqlite", pytest.param("postgresql", marks=[pytest.mark.process, pytest.mark.skipif(
    bool(pg_server.available()), reason=pg_server.available() or "available")])]


@pytest.fixture(scope="module", params=BACKENDS)
def server_url(request, tmp_path_factory):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('hist') / 'runs.db'}"
    else:
        with pg_server.postgres_server() as url:
            yield url


def _store(database, events) -> str:
    writer = RunWriter(database)
    for event in events:
        writer(event)
    writer.close()
    return events[0].run_id


def _run(t0: float = 1000.0) -> list:
    """The synthetic run with its interval records moved inside their phase's last attempt
    (the storage fixture places them a minute before the phase end, outside a 20 s phase)."""
    out = []
    for e in full_run(t0):
        if isinstance(e, ev.IntervalClosed):
            r = e.interval
            end_of_phase = r.start_s + 60 - r.index
            start = end_of_phase - 5 + r.index
            e = ev.IntervalClosed(replace(r, start_s=start, end_s=start + 1))
        out.append(e)
    return out


def _slower_run() -> list:
    """The synthetic run with a lower EP_RR, to compare against the plain one."""
    events = []
    for e in _run(2000.0):
        if isinstance(e, ev.MetricComputed) and e.metric.name == "EP_RR":
            e = ev.MetricComputed(MetricResult("EP_RR", 26.37, "IOPS/W", True, "", 1800.0,
                                               455.0, 12000.0, "IOPS", 2.6, 1))
        if isinstance(e, ev.RunFinished):
            e = ev.RunFinished(e.status, e.t, (MetricResult(
                "EP_RR", 26.37, "IOPS/W", True, "", 1800.0, 455.0, 12000.0, "IOPS", 2.6, 1),
                e.metrics[1]))
        events.append(e)
    return events


@pytest.fixture(scope="module")
def stored(server_url):
    """A database with two full runs and 300 list-only runs; cleaned out afterwards."""
    database = open_database(server_url)
    with database.read() as conn:  # module-scoped server: start from an empty history
        conn.execute(sa.delete(s.Run))
    first = _store(database, _run())
    second = _store(database, _slower_run())
    bulk = fill_history(database, 300)
    yield database, first, second, bulk
    database.close()


@pytest.fixture()
def view(qtbot, stored):
    database = stored[0]
    widget = HistoryView(database)
    qtbot.addWidget(widget)
    widget.resize(1400, 800)
    return widget


@pytest.mark.process
def test_list_filter_search_and_sort(view, stored) -> None:
    _, first, second, bulk = stored
    assert view.model.rowCount() == 302
    # issue 28: the header's arrow agrees with the order (Qt put it on "Run" at first)
    header, when = view.table.horizontalHeader(), view.model.column_index("Started (UTC)")
    assert header.sortIndicatorSection() == when
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    shown = [view.model.index(r, when).data() for r in range(view.model.rowCount())]
    assert shown == sorted(shown, reverse=True)
    assert view.count.text() == "302 runs"
    view.search.setText(first[:8])  # typing filters at once
    assert view.model.visible_run_ids() == [first]
    assert view.count.text() == "1 of 302 runs"
    view.apply_filter(HistoryFilter(statuses=frozenset({"INVALID"})))
    shown = set(view.model.visible_run_ids())
    assert {first, second} <= shown  # EP_RI INVALID in the synthetic runs
    status_col = view.model.column_index("Status")
    texts = {view.model.index(r, status_col).data() for r in range(view.model.rowCount())}
    assert all("INVALID" in t for t in texts)
    view.apply_filter(HistoryFilter(statuses=frozenset({"ABORTED"}),
                                    date_from=date(2024, 1, 10), date_to=date(2024, 1, 20)))
    rows = {r.run_id: r for r in list_runs(view.database)}  # every run, read independently
    got = view.model.visible_run_ids()
    assert got and all(rows[i].status is RunStatus.ABORTED
                       and "2024-01-10" <= rows[i].started_wall[:10] <= "2024-01-20"
                       for i in got)
    view.apply_filter(HistoryFilter(taxonomy="online-3", sut="SN-0007"))
    assert all(rows[i].taxonomy == "online-3" and "SN-0007" in rows[i].sut
               for i in view.model.visible_run_ids())
    stations = {r.station for r in rows.values()}
    assert stations  # the Station column is filled (issue 26), and QA filters by it
    assert view.station_choice.findData(sorted(stations)[0]) > 0
    view.apply_filter(HistoryFilter(station=sorted(stations)[0]))
    assert view.model.visible_run_ids() and all(
        rows[i].station == sorted(stations)[0] for i in view.model.visible_run_ids())
    view.clear_filters()
    view.sort_by("Started (UTC)", descending=False)
    started = [view.model.index(r, view.model.column_index("Started (UTC)")).data()
               for r in range(view.model.rowCount())]
    assert started == sorted(started)
    view.reload()  # new rows come newest first: they are put in the order the arrow shows
    assert header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    assert [view.model.index(r, view.model.column_index("Started (UTC)")).data()
            for r in range(view.model.rowCount())] == started
    view.sort_by("EP_RR", descending=True)
    col = view.model.column_index("EP_RR")
    values = [view.model.row(r).metric("EP_RR") for r in range(5)]
    assert [m.value for m in values] == sorted((m.value for m in values), reverse=True)
    # the arrow drawn from the order asked for: ▼ descending (issue 41)
    assert view.model.headerData(col, sa_horizontal()) == "EP_RR (IOPS/W) ▼"


def sa_horizontal():
    from PySide6.QtCore import Qt
    return Qt.Orientation.Horizontal


@pytest.mark.process
def test_column_chooser_hides_and_shows(view) -> None:
    menu = view.column_menu()
    operator = next(a for a in menu.actions() if a.text() == "Station")
    lab = next(a for a in menu.actions() if a.text() == "Lab")
    assert operator.isChecked() and not lab.isChecked()  # Lab hidden by default
    operator.setChecked(False)
    assert view.table.isColumnHidden(view.model.column_index("Station"))
    lab.setChecked(True)
    assert not view.table.isColumnHidden(view.model.column_index("Lab"))


def test_open_detail_shows_plots_metrics_and_evidence(qtbot, view, stored, tmp_path) -> None:
    database, first, _, _ = stored
    view.search.setText(first[:8])
    view.table.selectRow(0)
    assert view.open_button.isEnabled() and not view.compare_button.isEnabled()
    with qtbot.waitSignal(view.detail_opened, timeout=budget_ms(30_000)):  # loads in the background
        view.open_selected()
    detail = view.tabs.currentWidget()
    assert detail.run.run_id == first
    run = load_run(database, first)
    # whole run: every usable power sample drawn (NaN gaps between phases only)
    x, y = detail.plots.curve_data("power")
    assert np.count_nonzero(np.isfinite(y)) == int(run.power.usable.sum())
    detail.phase_choice.setCurrentIndex(2)  # phase index 1, the RR active phase
    x, y = detail.plots.curve_data("power")
    phase = run.power.for_phase(1)
    assert np.count_nonzero(np.isfinite(y)) == int(phase.usable.sum())
    ep_x, ep_y = detail.plots.curve_data("ep")
    assert len(ep_y) == 5 and ep_y[0] == pytest.approx(29.3)  # 2 + 3 intervals, last attempt
    assert "RR" in detail.plots.histograms
    rows = {r[0]: r for r in detail.metrics.rows()}
    assert rows["EP_RR"][-1] == "VALID"
    assert rows["EP_RI"][-1] == "INVALID: power not stable"
    assert any("power not stable" in detail.problems.item(i).text()
               for i in range(detail.problems.count()))
    instruments = detail.instruments
    assert "WT310E" in instruments.item(0, 1).text()
    assert instruments.item(0, 4).text() == "2024-01-15"  # calibration date
    assert "300 V" in instruments.item(0, 5).text()  # voltage range
    assert "rw=randrw" in detail.job_text.toPlainText()
    assert "EP_RI INVALID" in detail.log.toPlainText()
    pdf = detail.export_pdf(tmp_path / "r.pdf")
    xlsx = detail.export_xlsx(tmp_path / "r.xlsx")
    assert pdf.read_bytes()[:5] == b"%PDF-" and xlsx.read_bytes()[:2] == b"PK"


def test_compare_two_runs_with_deltas_and_overlays(view, stored) -> None:
    _, first, second, _ = stored
    compare = view.compare([first, second])
    assert view.tabs.currentWidget() is compare
    rows = {r[0]: r for r in compare.rows()}
    # EP_RR: 29.3 (baseline) vs 26.37 → −2.93 and −10 %, printed with the report digits (§4)
    name, unit, base, other, diff, pct = rows["EP_RR"]
    assert (unit, base, other) == ("IOPS/W", "29.300", "26.370")
    assert diff == "−2.930" and pct == "−10.000 %"
    assert rows["EP_RI"][2] == "INVALID (no value)" and rows["EP_RI"][4] == "—"
    assert len(compare.power_curves) == len(compare.ep_curves) == 2
    x, y = compare.power_curves[1].getOriginalDataset()
    assert np.nanmax(y) > 0 and len(y) == len(load_run(view.database, second).power)
    items = compare.hist_plot.getPlotItem().items
    stems = [i for i in items if i.__class__.__name__ == "PlotDataItem"]
    levels = [i for i in items if i.__class__.__name__ == "InfiniteLine"]
    assert len(stems) == 2 and len(levels) == 2  # 90 % level per run (99.9 % is NaN)
    assert "confidence levels" in compare.hist_note.text()


@pytest.mark.process
def test_disposition_is_audited_and_run_data_unchanged(view, stored, monkeypatch) -> None:
    database, first, second, _ = stored
    before = load_run(database, second)
    detail = view.open_detail(second)
    detail.author.setText("Q. A. Lead")
    detail.audit_text.setPlainText("EP_RR 10 % below the reference: rejected")
    detail.reject_button.click()
    assert "Recorded" in detail.audit_state.text()
    detail.audit_text.setPlainText("")
    from ui.history import signoff_dialogs  # Accept asks first: confirmed, but no reason

    monkeypatch.setattr(signoff_dialogs.AcceptDialog, "exec",
                        lambda self: self.why.setText("demo data") or 1)
    detail.accept_button.click()  # no reason → refused, nothing written
    assert "reason" in detail.audit_state.text()
    detail.add_entry("note", "re-test scheduled", "Q. A. Lead")
    entries = audit_entries(database, second)
    assert [(e.kind.value, e.disposition and e.disposition.value) for e in entries] == [
        ("disposition", "rejected"), ("note", None)]
    detail.refresh_audit()  # each entry says who inserted it (schema 0022, docs/security.md)
    assert [detail.audit_list.item(i).toolTip() for i in range(2)] == [
        f"inserted by {e.db_role}" for e in entries] and all(e.db_role for e in entries)
    after = load_run(database, second)
    assert after.samples_sha256 == before.samples_sha256
    assert [(m.name, m.valid, m.reason) for m in after.metrics] == [
        (m.name, m.valid, m.reason) for m in before.metrics]
    assert all(a.value == b.value or (math.isnan(a.value) and math.isnan(b.value))
               for a, b in zip(after.metrics, before.metrics))
    assert after.config_snapshot == before.config_snapshot and after.status is before.status
    # the list shows the latest disposition
    view.search.setText(second)
    row = view.model.row(0)
    assert row.run_id == second
    assert row.disposition == "rejected" and row.disposition_author == "Q. A. Lead"
    with pytest.raises(Exception, match="append-only"):
        with database.read() as conn:
            conn.execute(sa.text("UPDATE audit_entries SET text = 'edited'"))


import numpy as np  # noqa: E402 - only the envelope tests below need it


@pytest.mark.process
def test_main_window_opens_the_history_with_ctrl_h(qtbot, tmp_path, monkeypatch) -> None:
    from ui.shell.main_window import MainWindow

    monkeypatch.setenv("STORWATT_SETTINGS", str(tmp_path / "ui.ini"))
    window = MainWindow(lab="sim-direct", db_url=f"sqlite:///{tmp_path / 'h.db'}")
    qtbot.addWidget(window)
    action = next(a for a in window.findChildren(type(window.quit_action))
                  if a.text() == "Run &history…")
    assert action.shortcut().toString() == "Ctrl+H"
    action.trigger()
    qtbot.addWidget(window.history)
    assert window.history.isVisible()


def by_status_text(rows, run_id: str) -> str:
    return next(r.status_text for r in rows if r.run_id == run_id)


def _reference_keys(rows, order):
    """How the history sorted in Python before issue 27: the SQL order is held to these."""
    from ui.history.model import _qa

    keys = {"started": lambda r: r.started_wall, "operator": lambda r: r.operator.lower(),
            "station": lambda r: r.station.lower(), "status": lambda r: r.searched_status,
            "duration": lambda r: -1 if r.duration_s is None else r.duration_s,
            "method": lambda r: (r.method_name, r.method_version), "qa": _qa}
    if order.metric:
        return [None if (m := r.metric(order.metric)) is None or math.isnan(m.value)
                else m.value for r in rows]
    return [keys[order.key](r) for r in rows]


@pytest.mark.process
def test_the_database_filters_and_sorts_as_the_history_always_did(stored) -> None:
    """Issue 27: the SQL translation of every filter and sort gives the runs, in the order,
    that the Python filter (``HistoryFilter.matches``) and the old sort keys give — verdict
    words, QA dispositions and LIKE's wildcards included. A COM's state is shown, not
    searched (``RunSummary.searched_status``): an unobserved COM check is no INVALID metric in
    the search either."""
    from app.storage.audit import add_audit_entry
    from app.storage.history import HistoryOrder
    from app.storage.run_pages import count_runs, run_ids, run_page

    database, first, second, bulk = stored
    add_audit_entry(database, bulk[5], "disposition", "EP_RR low", "Q. A. Lead",
                    disposition="accepted")
    with database.read() as conn, guards_lifted(conn):  # an unobserved COM check
        pk = conn.execute(sa.select(s.Run.id).where(s.Run.uuid == bulk[7])).scalar_one()
        conn.execute(sa.insert(s.MetricRow).values(
            run_id=pk, name="COM_dedup", value=None, unit="", valid=False, reason="not seen",
            run_length_s=0.0, ops_unit=""))
        # a run's row changed after it was stored: PostgreSQL's searched text follows (0019)
        conn.execute(sa.update(s.Run).where(s.Run.uuid == bulk[9]).values(
            error="Meter link LOST at 12 s"))
    try:
        rows = list_runs(database)  # newest first: the history's default order
        stations = sorted({r.station for r in rows})
        filters = [HistoryFilter(), HistoryFilter(text="ACME array"), HistoryFilter(text="s/n"),
                   HistoryFilter(text=first[:8]), HistoryFilter(text="invalid"),
                   HistoryFilter(text="1 metric"), HistoryFilter(text="metrics"),
                   HistoryFilter(text="com not verified"), HistoryFilter(text="accepted"),
                   HistoryFilter(text="rejected q."), HistoryFilter(text="chloé emerald 3.0"),
                   HistoryFilter(text="%"), HistoryFilter(text="_"), HistoryFilter(text="—"),
                   HistoryFilter(text="link lost"), HistoryFilter(text="aborted"),
                   HistoryFilter(statuses=frozenset({"INVALID"})),
                   HistoryFilter(statuses=frozenset({"ABORTED", "INVALID"})),
                   HistoryFilter(date_from=date(2024, 1, 10), date_to=date(2024, 1, 20)),
                   HistoryFilter(taxonomy="online-3", sut="SN-0007"),
                   HistoryFilter(sut="globex"), HistoryFilter(station=stations[0], text="ana")]
        for wanted in filters:
            expected = [r.run_id for r in rows if wanted.matches(r)]
            assert run_ids(database, wanted, HistoryOrder()) == expected, wanted
            assert count_runs(database, wanted) == len(expected), wanted
        assert run_ids(database, HistoryFilter(text="lost"), HistoryOrder()) == [bulk[9]]
        assert not run_ids(database, HistoryFilter(text="verified"), HistoryOrder())
        assert "1 COM NOT VERIFIED" in by_status_text(rows, bulk[7])
        by_id = {r.run_id: r for r in rows}
        for order in [HistoryOrder("started", False), HistoryOrder("operator"),
                      HistoryOrder("station", False), HistoryOrder("status"),
                      HistoryOrder("status", False), HistoryOrder("duration", False),
                      HistoryOrder("method"), HistoryOrder("qa", False),
                      HistoryOrder(metric="EP_RR"), HistoryOrder(metric="EP_RR", descending=False)]:
            keys = _reference_keys([by_id[i] for i in run_ids(database, HistoryFilter(), order)],
                                   order)
            present = [k for k in keys if k is not None]
            assert present == sorted(present, reverse=order.descending), order
            assert keys == present + [None] * (len(keys) - len(present)), order  # none: last
            page = run_page(database, HistoryFilter(), order, 100, 100)
            assert [r.run_id for r in page] == run_ids(database, HistoryFilter(), order)[100:200]
    finally:
        with database.read() as conn, guards_lifted(conn):
            conn.execute(sa.delete(s.MetricRow).where(s.MetricRow.name == "COM_dedup"))
            conn.execute(sa.update(s.Run).where(s.Run.uuid == bulk[9]).values(error=""))


@pytest.mark.process
def test_postgresql_reads_the_stored_search_text_and_joins_the_invalid_runs(stored) -> None:
    """Issue 27, measured on 100,000 runs (docs/performance.md): lower-casing every run's
    columns on each search, and testing every run against the INVALID runs (an OR with an
    empty status list kept them from being joined), took PostgreSQL over its 150 ms. The plans
    read the stored lower-case text (revision 0019) and join the INVALID runs."""
    from app.storage.history import INVALID, narrowed

    database = stored[0]
    if database.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's plans")

    def plan(wanted: HistoryFilter) -> str:
        query = narrowed(sa.select(sa.func.count()).select_from(s.Run), wanted,
                         dialect="postgresql")
        sql = str(query.compile(database.engine, compile_kwargs={"literal_binds": True}))
        with database.read() as conn:
            return "\n".join(conn.exec_driver_sql("EXPLAIN " + sql)
                             .scalars())

    text = plan(HistoryFilter(text="lost"))
    assert "searched_text ~~ '%lost%'" in text and "COALESCE(uuid" not in text, text
    invalid = plan(HistoryFilter(statuses=frozenset({INVALID})))
    assert "SubPlan" not in invalid and "Join" in invalid, invalid


@pytest.mark.process
def test_postgresql_tables_never_analysed_are_analysed_when_the_history_opens(stored) -> None:
    """Issue 27: a just-filled lab database has no statistics until autovacuum comes, and
    PostgreSQL then read every metric for each page of 200 runs (~50–100 ms per filter)."""
    from app.storage.planner_stats import refresh_statistics

    database = stored[0]
    if database.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's statistics (SQLite's: tests/test_history_paging.py)")

    def analysed() -> set[str]:
        with database.read() as conn:
            return set(conn.exec_driver_sql(
                "SELECT DISTINCT tablename FROM pg_stats WHERE tablename IN "
                "('metrics', 'audit_entries')").scalars())

    with database.read() as conn:  # as a fresh fill leaves them (the test server's superuser)
        conn.exec_driver_sql("DELETE FROM pg_statistic WHERE starelid = 'metrics'::regclass")
    assert "metrics" not in analysed()
    assert refresh_statistics(database, 302)
    assert "metrics" in analysed()
