"""The xlsx export: the Test Data Report figures plus every number they were computed from.

Schema (sheet names, column names and order) is a contract with QA scripts and is documented
in ``docs/export-format.md``; add columns only at the end of a sheet. Cells hold full
precision (floats as stored); number formats only change the display. Missing values
(NaN / NULL) are empty cells, never 0.
"""

from __future__ import annotations

import math
from datetime import datetime
from collections.abc import Iterable, Sequence
from itertools import zip_longest
from pathlib import Path
from typing import BinaryIO

import numpy as np
import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from app.sequencer.access_check import method_departures
from app.metrics.formatting import excel_number_format, format_duration
from app.metrics.histogram_basis import histogram_basis
from app.core.records import MetricResult, PhaseKind
from app.rules.com_verdict import ComState, ComVerdict
from app.reports.content import VALID, ReportContent
from app.signoff.revisions import NOT_RECORDED
from app.reports import power_inputs
from app.reports.di_report import CELL_COLUMNS as DI_CELL_COLUMNS
from app.reports.di_report import SWEET_COLUMNS as DI_SWEET_COLUMNS, di_report
from app.reports.sweep_report import COLUMNS as SWEEP_COLUMNS, sweep_table
from app.reports.text import flag_text
from app.reports.xlsx_rows import ColumnSheet
from app.storage.stored import per_phase
from drivers.interfaces import MeasuredPattern

TDR_SHEET = "Test Data Report"
METRIC_COLUMNS = ("metric", "value", "unit", "validity", "reason", "description",
                  "run_length_min", "avg_latency_ms", "avg_power_w", "ops_rate", "ops_unit",
                  "phase", "window_start_s", "window_end_s", "run_length_s")
PHASE_COLUMNS = ("phase", "name", "kind", "profile", "status", "attempts", "t_start_s",
                 "t_end_s", "window_start_s", "window_end_s", "stabilisation_intervals",
                 "measurement_intervals", "interval_s", "error")
INTERVAL_COLUMNS = ("phase", "profile", "interval", "start_s", "end_s", "avg_power_w",
                    "ops_rate", "ops_unit", "avg_response_ms", "ep", "wma", "in_measurement",
                    "stable", "n_power_samples", "ops", "attempt", "in_window", "phase_name")
#: kept lean on purpose: ~36 000 rows for 8 h at 1 Hz, and every cell costs write time
#: (ranges, frequency and attempts are in the PDF's instrument table and the Phases sheet)
SAMPLE_COLUMNS = ("t_s", "phase", "watts", "volts", "amps", "pf", "uncertainty_pct", "flags",
                  "temp_c", "interval", "in_window", "excluded")
TEMPERATURE_COLUMNS = ("t_s", "phase", "celsius", "flags")
BIN_COLUMNS = ("phase", "profile", "bin_ns", "bin_ms", "count", "cumulative_pct")
LEVEL_COLUMNS = ("phase", "profile", "level_pct", "response_ms", "ceiling_ms", "above_ceiling",
                 "total_ios", "shown_as")
LEVEL_FIRST_COL = len(BIN_COLUMNS) + 1  # one empty column between the two tables
#: the null-engine check before each search (method-notes §2): the job file with no IO behind it
GENERATOR_COLUMNS = ("profile", "step", "generator_iops", "generator_mib_s", "asked_iops",
                     "stream_share_error_points", "seconds")
#: the access pattern of the same pre-run, from fio's per-IO log (app/sequencer/access_check.py)
PATTERN_COLUMNS = ("pattern_profile", "stream", "logged_ios", "logged_s", "read_pct",
                   "sequential_pct", "aligned", "uniformity_p", "lowest_offset_pct",
                   "highest_end_pct", "share_of_ios_pct", "band_reads_below_pct",
                   "departures_from_method", "measured_by")
SEARCH_COLUMNS = ("profile", "queue_depth", "jobs", "ops_rate", "ops_unit", "avg_response_ms",
                  "rate_read_iops", "rate_write_iops", "probes", "note", "pre_run_basis")
EVENT_COLUMNS = ("t_s", "level", "phase", "message")
AUDIT_COLUMNS = ("recorded_utc", "kind", "disposition", "author", "text", "subject", "outcome",
                 "revision", "record_sha256", "made_on", "inserted_by")
#: one row per record revision, then one per QA approval (app.signoff.revisions)
SIGNOFF_COLUMNS = ("row", "revision", "record_sha256", "recorded_utc", "author", "entry",
                   "text", "applies_to_current", "made_on")


def _cell(value):
    """NaN/None → empty cell; numpy scalars → Python numbers."""
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _column(values: np.ndarray) -> list:
    """A numpy column as cell values (NaN → None) without a Python call per element."""
    if values.dtype.kind == "f":
        out = values.astype(object)
        out[~np.isfinite(values)] = None
        return out.tolist()
    return values.tolist()


class _Writer:
    """Data sheets (header row + one block of data) and the formats of the summary sheet."""

    def __init__(self, workbook: Workbook) -> None:
        self.book = workbook
        self.header = workbook.add_format({"bold": True, "bg_color": "#E6E6E6",
                                           "bottom": 1})
        self.bold = workbook.add_format({"bold": True})
        self.title = workbook.add_format({"bold": True, "font_size": 14})
        self.banner = workbook.add_format({"bold": True, "font_color": "white",
                                           "bg_color": "black"})
        self.section = workbook.add_format({"bold": True, "font_size": 11, "bottom": 1})
        self.invalid_text = workbook.add_format({"bold": True})
        self.seconds = workbook.add_format({"num_format": "0.000"})
        self._figures: dict[tuple[str, bool], Format] = {}

    def figure(self, value: float, valid: bool = True) -> Format:
        """The display format that shows ``value`` with the PDF's digits (method-notes §4);
        an INVALID figure in grey parentheses. Formats are shared per digit count."""
        digits = excel_number_format(value)
        key = (digits, valid)
        if key not in self._figures:
            self._figures[key] = self.book.add_format(
                {"num_format": digits} if valid else
                {"num_format": f"({digits})", "font_color": "#7F7F7F", "italic": True})
        return self._figures[key]

    def table(self, name: str, columns: Sequence[str | None], rows: Iterable[Sequence]
              ) -> Worksheet:
        """A new sheet of row-wise data under a header row (a None column name leaves a gap)."""
        data = [[_cell(v) for v in column] for column in zip_longest(*rows)]
        return self.columns(name, columns, data)

    def columns(self, name: str, columns: Sequence[str | None], data: Sequence[list]
                ) -> Worksheet:
        """A new sheet of column-wise data (lists of equal length, None = empty cell) under a
        header row. The data goes in as one block (app/reports/xlsx_rows.py): written cell by
        cell, XlsxWriter's per-call cost made this the export's bottleneck on long runs."""
        sheet = self.book.add_worksheet(name, worksheet_class=ColumnSheet)
        for col, title in enumerate(columns):
            if title is not None:
                sheet.write_string(0, col, title, self.header)
        sheet.freeze_panes(1, 0)
        printable(sheet, header_row=0)
        sheet.write_columns(1, data)
        return sheet


def printable(sheet: Worksheet, header_row: int | None = None) -> None:
    """Printed, a sheet is A4 landscape, one page wide, with its header row on every page:
    by default every column past the first page's width printed on pages of its own, and a
    demo run's workbook came to 223 pages (issue 41)."""
    sheet.set_paper(9)  # A4
    sheet.set_landscape()
    sheet.fit_to_pages(1, 0)  # one page wide, as many long as the rows need
    if header_row is not None:
        sheet.repeat_rows(header_row)


# --- Test Data Report sheet ----------------------------------------------------------------------

def _info_rows(c: ReportContent) -> list[tuple[str, object]]:
    run, config = c.run, c.run.config
    sut = config.sut
    return [
        ("Run id", run.run_id), ("Product", c.product), ("Serial number", sut.serial),
        ("Raw capacity (GB, 10^9 B)", sut.raw_capacity_bytes / 1e9),
        ("Taxonomy", run.taxonomy), ("Classification justification", config.classification_reason),
        ("Method", f"{run.method_name} {run.method_version}"),
        ("Method identity", c.compliance.method_line()),
        ("Compliance", c.compliance.label),
        ("Compliance rules version", c.compliance.rules_version),
        *((f"Compliance: {k.name}", f"{k.verdict}: {k.evidence}") for k in c.compliance.criteria),
        ("Run status", run.status.value + (f": {run.error}" if run.error else "")),
        ("Started (UTC)", run.started_wall), ("Finished (UTC)", run.finished_wall or ""),
        ("Duration", format_duration(run.duration_s)),
        ("Station", config.station), ("Operator", config.operator),
        ("Histogram latency", histogram_basis(config).describe()),
        ("Instrument connection test", config.instrument_check),
        ("QA disposition", c.disposition_text),
        ("Samples SHA-256", run.samples_sha256),
        ("Record revision", c.signoff.current.number),
        ("Record SHA-256", c.signoff.current.sha256),
        ("Sign-off", c.signoff.status),
        *(("QA approval", a.describe()) for a in c.signoff.approvals),
    ]


def _metric_row(c: ReportContent, line) -> list:
    r = line.result
    a = line.attempt
    return [line.name, r.value if r else None, line.unit, line.status, line.reason,
            f"{line.title} — {line.unit_text}", r.run_length_s / 60 if r else None,
            r.avg_response_ms if r else None, r.avg_power_w if r else None,
            r.ops_rate if r else None, r.ops_unit if r else "",
            (r.phase_index if r and r.phase_index is not None else (a.phase_index if a else None)),
            a.window_start_s if a and a.has_window else None,
            a.window_end_s if a and a.has_window else None,
            r.run_length_s if r else None]


def _com_row(com: ComVerdict) -> list:
    # a loaded run's COM verdict carries the station's check as its full MetricResult
    m = com.metric if isinstance(com.metric, MetricResult) else None
    return [f"COM_{com.com_id}", m.value if m else None, "ratio", com.state.value, com.detail,
            f"{com.title} — available in SUT: {'YES' if com.available else 'NO'}; on during "
            f"test: {'YES' if com.on_during_test else 'NO'}", None, None, None,
            m.ops_rate if m else None, m.ops_unit if m else "",
            m.phase_index if m else None, None, None, m.run_length_s if m else None]


def _tdr_sheet(w: _Writer, c: ReportContent) -> tuple[Worksheet, int, int]:
    """Info block, then the metrics table (header row: column A = ``metric``)."""
    sheet = w.book.add_worksheet(TDR_SHEET)
    printable(sheet)
    sheet.write(0, 0, "Test Data Report", w.title)
    row = 1
    if not c.compliant:
        sheet.merge_range(row, 0, row, 5, c.compliance.banner(), w.banner)
        row += 1
    for key, value in _info_rows(c):
        sheet.write(row, 0, key, w.bold)
        sheet.write(row, 1, _cell(value) if value is not None else "")
        row += 1
    row += 1
    header = row
    sheet.write_row(header, 0, METRIC_COLUMNS, w.header)
    row += 1
    sections = [("Operational power — ready idle test",
                 [m for m in c.metrics if m.name == "EP_RI"]),
                ("Active power tests", [m for m in c.metrics if m.name != "EP_RI"])]
    for title, lines in sections:
        sheet.write(row, 0, title, w.section)
        row += 1
        for line in lines:
            _write_metric(w, sheet, row, _metric_row(c, line), line.status == VALID)
            row += 1
    sheet.write(row, 0, "Capacity optimisations (COM heuristics)", w.section)
    row += 1
    for com in c.coms:
        _write_metric(w, sheet, row, _com_row(com), com.state is ComState.PASSED)
        row += 1
    last = row - 1
    w.book.define_name("Metrics", f"='{TDR_SHEET}'!$A${header + 1}:$O${last + 1}")
    row += 1
    for note in ("Metric rows are those whose column A starts with EP_ or COM_; section rows "
                 "have no value.",
                 "Cells hold full precision; a value shown in parentheses is INVALID and not "
                 "a result (see validity and reason).",
                 "1 GB = 10^9 bytes; 1 GiB = 2^30 bytes; 1 MiB = 2^20 bytes. EP_RI ops_rate is "
                 "the raw capacity in GB.",
                 "Problems: " + (" | ".join(c.problems) or "none")):
        sheet.write(row, 0, note)
        row += 1
    sheet.set_column(0, 0, 30)
    sheet.set_column(1, 1, 16)
    sheet.set_column(3, 3, 14)
    sheet.set_column(4, 5, 40)
    sheet.set_column(6, 14, 14)
    # only the title row and the metric names stay put: freezing down to the table header
    # froze ~37 info rows, more than a laptop shows, and nothing below them could scroll
    sheet.freeze_panes(1, 1)
    return sheet, header, row + 1


#: Metric-row columns holding reported figures: shown with the PDF's digits (method-notes §4).
FIGURE_COLUMNS = frozenset(METRIC_COLUMNS.index(name) for name in (
    "value", "run_length_min", "avg_latency_ms", "avg_power_w", "ops_rate"))


def _write_metric(w: _Writer, sheet: Worksheet, row: int, values: list, valid: bool) -> None:
    for col, value in enumerate(values):
        value = _cell(value)
        if value is None:
            continue
        if col in FIGURE_COLUMNS and isinstance(value, float):
            sheet.write_number(row, col, value, w.figure(value, valid or col != 1))
        elif col == 3 and not valid:
            sheet.write_string(row, col, value, w.invalid_text)
        else:
            sheet.write(row, col, value)


# --- data sheets ---------------------------------------------------------------------------------

def _phases_sheet(w: _Writer, c: ReportContent) -> None:
    rows = []
    for p in c.run.phases:
        last = c.attempts.get(p.index)
        has = last is not None and last.has_window
        rows.append([p.index, p.info.name, p.info.kind.value, p.info.profile or "",
                     p.status.value, p.attempts, p.t_start, p.t_end,
                     last.window_start_s if has else None, last.window_end_s if has else None,
                     p.info.stabilisation_intervals, p.info.measurement_intervals, c.interval_s,
                     p.error])
    sheet = w.table("Phases", PHASE_COLUMNS, rows)
    sheet.set_column(0, 12, 13)
    sheet.set_column(13, 13, 50)


def interval_rows(c: ReportContent) -> list[list]:
    run = c.run
    rows = []
    for phase in run.phases:
        last = c.attempts.get(phase.index)
        for r in (r for r in run.intervals if r.phase_index == phase.index):
            attempt = r.attempt
            in_window = bool(last is not None and r.attempt == last.attempt and r.in_measurement)
            ops = r.ops_rate * c.interval_s if r.ops_unit else None
            rows.append([r.phase_index, r.profile or "", r.index, r.start_s, r.end_s,
                         r.avg_power_w, r.ops_rate, r.ops_unit, r.avg_response_ms, r.ep, r.wma,
                         r.in_measurement, r.stable, r.n_power_samples, ops, attempt,
                         in_window, phase.info.name])
    return rows


def _intervals_sheet(w: _Writer, c: ReportContent) -> tuple[Worksheet, list[list]]:
    rows = interval_rows(c)
    sheet = w.table("Intervals", INTERVAL_COLUMNS, rows)
    sheet.set_column(0, len(INTERVAL_COLUMNS) - 1, 12)
    return sheet, rows


def _true_or_empty(mask: np.ndarray) -> list:
    """TRUE where set, empty elsewhere: a rare/common flag costs no cell where it is absent."""
    out = np.full(len(mask), None, dtype=object)
    out[mask] = True
    return out.tolist()


def _samples_sheet(w: _Writer, c: ReportContent) -> int:
    """Every power sample; temperature = the last usable reading at or before the sample."""
    run = c.run
    power, temp = run.power, run.temperature
    in_window = power.measured_in(run.last_attempts())
    last = per_phase(power.phase_index, {i: a.attempt for i, a in c.attempts.items()}, -1)
    placed = np.where(power.attempt == last, power.interval, -1)
    ok_c = temp.celsius[temp.usable]
    pos = np.searchsorted(temp.t[temp.usable], power.t, side="right") - 1
    temp_c = ok_c[np.clip(pos, 0, None)] if len(ok_c) else np.full(len(power), np.nan)
    temp_c = np.where(pos >= 0, temp_c, np.nan)
    interval = placed.astype(object)
    interval[placed < 0] = None
    data = [_column(power.t), power.phase_index.tolist(), _column(power.watts),
            _column(power.volts), _column(power.amps), _column(power.pf),
            _column(power.uncertainty_pct), flag_text(power.flags), _column(temp_c),
            interval.tolist(), _true_or_empty(in_window),
            _true_or_empty(~power.usable)]
    sheet = w.columns("Samples", SAMPLE_COLUMNS, data)
    sheet.set_column(0, len(SAMPLE_COLUMNS) - 1, 11)
    return len(power)


def _temperature_sheet(w: _Writer, c: ReportContent) -> None:
    temp = c.run.temperature
    w.columns("Temperature", TEMPERATURE_COLUMNS, [_column(temp.t), temp.phase_index.tolist(),
                                                  _column(temp.celsius), flag_text(temp.flags)])


def _histograms_sheet(w: _Writer, c: ReportContent) -> None:
    bins, levels = [], []
    for h in c.run.histograms:
        total = sum(h.bins.values())
        running = 0
        for ns in sorted(h.bins):
            running += h.bins[ns]
            bins.append([h.phase_index, h.profile, ns, ns / 1e6, h.bins[ns],
                         100.0 * running / total if total else None])
        for lvl in h.levels():  # response_ms empty where the IO count cannot support it
            levels.append([h.phase_index, h.profile, lvl.level_pct,
                           lvl.shown_ms, h.ceiling_ms, h.above_ceiling,
                           total, lvl.value_text()])
    # side by side: bins from column A, confidence levels after one empty column
    gap = [None] * (LEVEL_FIRST_COL - len(BIN_COLUMNS))
    sheet = w.table("Histograms", [*BIN_COLUMNS, *gap, *LEVEL_COLUMNS],
                    _side_by_side(bins, len(BIN_COLUMNS), levels))
    sheet.set_column(0, LEVEL_FIRST_COL + len(LEVEL_COLUMNS), 12)


def _side_by_side(left: list[list], width: int, right: list[list]) -> list[list]:
    """Rows of two tables on one sheet: ``left`` (``width`` columns) from column A, ``right``
    after one empty column."""
    return [(left[i] if i < len(left) else [None] * width) + [None]
            + (right[i] if i < len(right) else []) for i in range(max(len(left), len(right)))]


def _generator_sheet(w: _Writer, c: ReportContent) -> None:
    """What the load generator alone reached per listed step: the profile's job file on fio's
    null engine before its probes (method-notes §2) — not a log of the measured run; beside
    it, the access pattern fio's per-IO log showed in the same pre-run, per profile and per
    stream, with every departure from the method."""
    rows = [[g.profile, g.step, g.iops, g.mib_s, g.asked_iops, g.share_error_pts, g.seconds]
            for r in c.run.search_results for g in r.generator]
    patterns = [row for r in c.run.search_results if r.pattern is not None
                for row in _pattern_rows(r.pattern, c)]
    if rows or patterns:
        w.table("Generator", [*GENERATOR_COLUMNS, None, *PATTERN_COLUMNS],
                _side_by_side(rows, len(GENERATOR_COLUMNS), patterns)
                ).set_column(0, len(GENERATOR_COLUMNS) + len(PATTERN_COLUMNS), 16)


def _pattern_rows(p: MeasuredPattern, c: ReportContent) -> list[list]:
    """The profile's row (stream empty), then one row per stream; departures on the first."""
    off = "; ".join(method_departures(p, c.method))
    whole = [p.profile, "", p.ios, p.seconds, p.read_pct, p.sequential_pct, p.aligned,
             p.uniformity_p, p.low_pct, p.high_pct, None, "", off or "none", p.source]
    return [whole] + [[p.profile, s.name, None, None, s.read_pct, s.sequential_pct, None,
                       s.uniformity_p, s.low_pct, s.high_pct, s.share_pct,
                       "; ".join(f"{x:g} %: {m:g} (reference {r:g})" for x, m, r in s.curve),
                       "", ""] for s in p.streams]


def _search_sheet(w: _Writer, c: ReportContent) -> None:
    rows = [[r.profile, r.queue_depth, r.jobs, r.ops_rate, r.ops_unit, r.avg_response_ms,
             r.rate_iops[0] if r.rate_iops else None, r.rate_iops[1] if r.rate_iops else None,
             "; ".join(f"qd {qd}: {rate!r} {r.ops_unit} @ {ms!r} ms" for qd, rate, ms in r.probes),
             r.note, r.pre_run_basis]
            for r in c.run.search_results]
    sheet = w.table("Search", SEARCH_COLUMNS, rows)
    sheet.set_column(0, 7, 13)
    sheet.set_column(8, 8, 80)


def _sweep_sheet(w: _Writer, c: ReportContent) -> None:
    """The sweep's steps (method-notes §6) and native charts of them against the units."""
    table = sweep_table(c.run)
    if table is None:
        return
    steps, notes = table.rows(), [table.title, f"Ended: {table.ended}"]
    blank = [None] * len(SWEEP_COLUMNS)
    # the sheet is written row by row, once: the steps, a gap, then the notes beside them
    rows = [(steps[i] if i < len(steps) else blank) + [None] + ([notes[i]] if i < len(notes)
                                                                else [])
            for i in range(max(len(steps), len(notes)))]
    sheet = w.table("Sweep", [*SWEEP_COLUMNS, None, "sweep"], rows)
    sheet.set_column(0, len(SWEEP_COLUMNS), 14)
    last = len(table.points)
    note = len(SWEEP_COLUMNS) + 1
    for k, (title, columns) in enumerate((("IOPS and avg response time", (2, 3)),
                                          ("Average power and W per drive", (4, 7)),
                                          ("mW/IOPS", (6,)))):
        chart = w.book.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
        for n, col in enumerate(columns):
            chart.add_series({"name": ["Sweep", 0, col], "categories": ["Sweep", 1, 0, last, 0],
                              "values": ["Sweep", 1, col, last, col], "y2_axis": n == 1})
        chart.set_title({"name": f"{table.sweep.name}: {title}"})
        chart.set_x_axis({"name": f"{table.sweep.unit}s"})
        chart.set_size({"width": 620, "height": 280})
        sheet.insert_chart(3 + 15 * k, note, chart)


def _di_sheet(w: _Writer, c: ReportContent) -> None:
    """The demand-intensity cells, sweet spots (method-notes §6) and the IOPS v response
    time chart, one series per thread loop."""
    report = di_report(c.run)
    if report is None:
        return
    cells, sweet = report.cell_rows(), report.sweet_rows()
    blank = [None] * len(DI_CELL_COLUMNS)
    # side by side (the sheet is written row by row, once): cells, a gap, the sweet spots
    rows = [(cells[i] if i < len(cells) else blank) + [None] + (sweet[i] if i < len(sweet)
                                                                else [])
            for i in range(max(len(cells), len(sweet)))]
    sheet = w.table("Demand intensity", [*DI_CELL_COLUMNS, None, *DI_SWEET_COLUMNS], rows)
    sheet.set_column(0, len(DI_CELL_COLUMNS) + len(DI_SWEET_COLUMNS) + 1, 14)
    first = len(DI_CELL_COLUMNS) + 1
    chart = w.book.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
    row = 1
    for threads, loop in report.loops().items():
        chart.add_series({"name": f"T{threads}",
                          "categories": ["Demand intensity", row, 4, row + len(loop) - 1, 4],
                          "values": ["Demand intensity", row, 3, row + len(loop) - 1, 3]})
        row += len(loop)
    chart.set_title({"name": f"{report.matrix.name}: IOPS v average response time"})
    chart.set_x_axis({"name": "average response time (ms)"})
    chart.set_y_axis({"name": "IOPS"})
    chart.set_size({"width": 620, "height": 300})
    sheet.insert_chart(len(report.matrix.ceilings_ms) + 3, first, chart)


def _events_sheet(w: _Writer, c: ReportContent) -> None:
    sheet = w.table("Events", EVENT_COLUMNS, ([e.t, e.level, e.phase_index, e.message]
                                              for e in c.events))
    sheet.set_column(0, 2, 10)
    sheet.set_column(3, 3, 120)


def _audit_sheet(w: _Writer, c: ReportContent) -> None:
    sheet = w.table("QA audit", AUDIT_COLUMNS, ([e.created_wall, e.kind.value,
                                                 e.disposition.value if e.disposition else "",
                                                 e.author, e.text, e.subject or "",
                                                 e.outcome.value if e.outcome else "",
                                                 e.revision, e.record_sha256 or "",
                                                 e.made_on or "", e.db_role or ""]
                                                for e in c.run.audit))
    sheet.set_column(0, 3, 22)
    sheet.set_column(4, 4, 100)
    sheet.set_column(5, 8, 16)


def _signoff_sheet(w: _Writer, c: ReportContent) -> None:
    """Each revision with what changed, then each approval with the revision it applies to."""
    so = c.signoff
    rows: list[list] = [["revision", r.number, r.sha256,
                         r.entry.created_wall if r.entry else c.run.finished_wall or "",
                         r.entry.author if r.entry else "StorWatt",
                         r.entry.what if r.entry else "as recorded", r.summary,
                         r.number == so.current.number, r.made_on] for r in so.revisions]
    rows += [["approval", a.revision, a.sha256, a.entry.created_wall, a.entry.author,
              a.entry.what, a.describe(), a.current and a.intact,
              a.entry.made_on or NOT_RECORDED] for a in so.approvals]
    sheet = w.table("Sign-off", SIGNOFF_COLUMNS, rows)
    sheet.set_column(0, 1, 10)
    sheet.set_column(2, 2, 66)
    sheet.set_column(3, 5, 24)
    sheet.set_column(6, 6, 100)


# --- charts ---------------------------------------------------------------------------------

def _power_inputs_sheets(w: _Writer, c: ReportContent) -> None:
    """``Power inputs`` (each input's meter and formula, and a chart of each input's power
    beside the total) and ``Input power`` (their readings); none for a run with one meter."""
    if not c.run.power_inputs:
        return
    sheet = w.table("Power inputs", power_inputs.INPUT_COLUMNS, power_inputs.input_rows(c.run))
    sheet.set_column(0, 5, 24)
    sheet.set_column(3, 3, 70)
    titles, data = power_inputs.input_columns(c.run)
    w.columns("Input power", titles, data)
    last = len(data[0])
    chart = w.book.add_chart({"type": "scatter", "subtype": "straight"})
    for col in [1, *range(2, len(titles), 3)]:
        chart.add_series({"name": titles[col], "categories": ["Input power", 1, 0, last, 0],
                          "values": ["Input power", 1, col, last, col],
                          "marker": {"type": "none"}, "line": {"width": 1.5 if col == 1 else 0.75}})
    chart.set_title({"name": "Power per input and the SUT's total"})
    chart.set_x_axis({"name": "run time (s)"})
    chart.set_y_axis({"name": "W"})
    chart.set_size({"width": 760, "height": 320})
    sheet.insert_chart(len(c.run.power_inputs) + 3, 0, chart)


def _charts(w: _Writer, c: ReportContent, tdr: Worksheet, anchor_row: int,
            intervals: list[list], n_samples: int) -> None:
    """Native charts on the summary sheet, fed from the data sheets (they update if QA edits)."""
    col = {name: i for i, name in enumerate(INTERVAL_COLUMNS)}
    if n_samples:
        chart = w.book.add_chart({"type": "scatter", "subtype": "straight"})
        chart.add_series({"name": "power (W)",
                          "categories": ["Samples", 1, 0, n_samples, 0],
                          "values": ["Samples", 1, 2, n_samples, 2],
                          "line": {"width": 0.75, "color": "black"}, "marker": {"type": "none"}})
        chart.set_title({"name": "Input power, every sample"})
        chart.set_x_axis({"name": "time since run start (s)"})
        chart.set_y_axis({"name": "W"})
        chart.set_legend({"none": True})
        chart.set_size({"width": 760, "height": 300})
        tdr.insert_chart(anchor_row, 0, chart)
    active = [p for p in c.run.phases if p.info.kind is PhaseKind.ACTIVE]
    chart = w.book.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
    markers = ("circle", "square", "triangle", "diamond", "x", "star", "plus")
    dashes = ("solid", "dash", "round_dot", "dash_dot", "long_dash", "square_dot", "long_dash_dot")
    series = 0
    for phase in active:
        rows = [i for i, r in enumerate(intervals) if r[0] == phase.index and r[col["attempt"]]
                == phase.attempts]
        if not rows:
            continue
        first, last = rows[0] + 1, rows[-1] + 1
        chart.add_series({"name": phase.info.name,
                          "categories": ["Intervals", first, col["interval"], last,
                                         col["interval"]],
                          "values": ["Intervals", first, col["ep"], last, col["ep"]],
                          "marker": {"type": markers[series % len(markers)], "size": 4},
                          "line": {"width": 1, "dash_type": dashes[series % len(dashes)]}})
        series += 1
    if series:
        chart.set_title({"name": "Periodic efficiency per interval (active profiles)"})
        chart.set_x_axis({"name": "interval in phase"})
        chart.set_y_axis({"name": "EP (IOPS/W or MiB/s/W)", "log_base": 10})
        chart.set_size({"width": 760, "height": 320})
        tdr.insert_chart(anchor_row + 16, 0, chart)


def _created(content: ReportContent) -> datetime:
    """The run's start, so exporting the same run twice gives the same document properties."""
    try:
        return datetime.fromisoformat(content.run.started_wall).replace(tzinfo=None)
    except ValueError:
        return datetime(2000, 1, 1)


def build_xlsx(content: ReportContent, path: Path | BinaryIO) -> Path | BinaryIO:
    """The workbook of ``content`` into ``path`` (a file name, or a binary stream: the
    export builds in memory and writes the file itself)."""
    target = path if hasattr(path, "write") else str(path)
    workbook = xlsxwriter.Workbook(target, {"constant_memory": True,
                                               "strings_to_numbers": False,
                                               "strings_to_formulas": False,
                                               "strings_to_urls": False,
                                               "nan_inf_to_errors": False})
    workbook.set_properties({"title": f"Test Data Report {content.run.run_id}",
                             "subject": content.method_label, "author": "StorWatt",
                             "created": _created(content)})
    w = _Writer(workbook)
    tdr, _, chart_row = _tdr_sheet(w, content)
    _phases_sheet(w, content)
    _, intervals = _intervals_sheet(w, content)
    n_samples = _samples_sheet(w, content)
    _temperature_sheet(w, content)
    _histograms_sheet(w, content)
    _search_sheet(w, content)
    _generator_sheet(w, content)
    _sweep_sheet(w, content)
    _di_sheet(w, content)
    _events_sheet(w, content)
    _audit_sheet(w, content)
    _signoff_sheet(w, content)
    _power_inputs_sheets(w, content)
    _charts(w, content, tdr, chart_row, intervals, n_samples)
    workbook.close()
    return path
