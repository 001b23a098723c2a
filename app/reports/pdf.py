"""The PDF Test Data Report (reportlab platypus).

Layout follows the seed's sample Test Data Report (cover, metrics page with idle then active
tests, capacity optimisations) and adds what a lab needs to audit the figures: instruments,
phases with their measurement windows, per-phase charts, histograms, intensity search, event
log and the workload job files. Every page carries the method (with a NON-COMPLIANT banner for
abbreviated variants), the record's revision and SHA-256 (app.signoff.revisions) and "Page N of M".
The
document is built with
``invariant=True`` so exporting the same stored run twice gives byte-identical files.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.lib.utils import TimeStamp
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (BaseDocTemplate, Frame, KeepTogether, PageBreak,
                                PageTemplate, Paragraph, Preformatted, Spacer, Table, TableStyle)
from xml.sax.saxutils import escape

from app.sequencer.access_check import describe as describe_pattern, method_departures
from app.metrics.histogram_basis import histogram_basis
from app.metrics.formatting import format_duration
from app.metrics.histogram import ceiling_meaning
from app.core.records import PhaseKind, wall_text
from app.reports import charts, power_inputs
from app.reports.content import INVALID, VALID, MetricLine, ReportContent
from app.reports.fonts import MONO, SANS, SANS_BOLD
from app.reports.di_report import CELL_COLUMNS as DI_CELL_COLUMNS
from app.reports.di_report import SWEET_COLUMNS as DI_SWEET_COLUMNS, di_report
from app.reports.sweep_report import COLUMNS as SWEEP_COLUMNS, sweep_table
from app.signoff.revisions import INSERTER_NOT_RECORDED, NOT_RECORDED
from drivers.interfaces import MeasuredPattern
from app.reports.text import (DASH, fmt_seconds, fmt_sig, invalid_value, is_number,
                              pdf_safe)

PAGE_W, PAGE_H = A4
MARGIN = 16 * mm
HEADER_H = 20 * mm
FOOTER_H = 12 * mm
BODY_W = PAGE_W - 2 * MARGIN
GRID = colors.HexColor("#9a9a9a")
SHADE = colors.HexColor("#ececec")
EVENT_LIMIT = 400  # longer logs: first and last lines, with the count left out stated

_base = getSampleStyleSheet()
STYLES = {  # every style names an embedded font (app.reports.fonts), none a standard one
    "title": ParagraphStyle("title", parent=_base["Title"], fontSize=18, leading=22,
                            fontName=SANS_BOLD),
    "h1": ParagraphStyle("h1", parent=_base["Heading1"], fontSize=13, leading=16,
                         spaceBefore=4, spaceAfter=6, fontName=SANS_BOLD),
    "h2": ParagraphStyle("h2", parent=_base["Heading2"], fontSize=10.5, leading=13,
                         spaceBefore=6, spaceAfter=3, fontName=SANS_BOLD),
    "body": ParagraphStyle("body", parent=_base["BodyText"], fontSize=8.5, leading=10.5,
                           fontName=SANS),
    "cell": ParagraphStyle("cell", parent=_base["BodyText"], fontSize=7.5, leading=9,
                           fontName=SANS),
    "cellb": ParagraphStyle("cellb", parent=_base["BodyText"], fontSize=7.5, leading=9,
                            fontName=SANS_BOLD),
    "small": ParagraphStyle("small", parent=_base["BodyText"], fontSize=7, leading=8.5,
                            fontName=SANS),
    "banner": ParagraphStyle("banner", parent=_base["BodyText"], fontSize=10, leading=12.5,
                             fontName=SANS_BOLD, textColor=colors.white,
                             alignment=TA_CENTER),
    "mono": ParagraphStyle("mono", fontName=MONO, fontSize=7, leading=8.4),
}


#: table-cell styles: a cell's paragraph cannot split across pages, so its text is clipped
CELL_STYLES = frozenset({"cell", "cellb"})
#: the longest text a table cell shows: even in a 30 mm column it stays well under a page
#: (reportlab raises LayoutError for a row taller than the frame, and then no report is written)
CELL_CHARS = 600
#: the longest text the page header repeats on every page
HEADER_CHARS = 90


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis and the full length; the xlsx
    export keeps every character."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters; the xlsx has all)"


def P(text: object, style: str = "cell") -> Paragraph:  # noqa: N802 - short: a table row is a list of them
    """A paragraph of plain text (escaped, font-safe) that wraps inside its cell; in a table
    cell text longer than :data:`CELL_CHARS` is clipped (body paragraphs wrap and may run
    over pages). A word too long for its column is split (``splitLongWords``)."""
    text = str(text)
    if style in CELL_STYLES:
        text = clipped(text, CELL_CHARS)
    return Paragraph(escape(pdf_safe(text)), STYLES[style])


def B(text: object, style: str = "cellb") -> Paragraph:  # noqa: N802 - short, as P
    return P(text, style)


def grid_table(rows: list[list], widths: list[float], header: bool = True,
               extra: list[tuple] | None = None) -> Table:
    table = Table(rows, colWidths=widths, repeatRows=1 if header else 0)
    style = [("GRID", (0, 0), (-1, -1), 0.4, GRID), ("VALIGN", (0, 0), (-1, -1), "TOP"),
             ("FONTNAME", (0, 0), (-1, -1), SANS),
             ("LEFTPADDING", (0, 0), (-1, -1), 3), ("RIGHTPADDING", (0, 0), (-1, -1), 3),
             ("TOPPADDING", (0, 0), (-1, -1), 2), ("BOTTOMPADDING", (0, 0), (-1, -1), 2)]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), SHADE))
    table.setStyle(TableStyle(style + (extra or [])))
    return table


def key_values(pairs: list[tuple[str, str]], key_w: float = 48 * mm) -> Table:
    return grid_table([[B(k), P(v)] for k, v in pairs], [key_w, BODY_W - key_w], header=False,
                      extra=[("BACKGROUND", (0, 0), (0, -1), SHADE)])


# --- page furniture -----------------------------------------------------------------------------

def record_time(content: ReportContent) -> datetime:
    """When the revision the report shows came to be: the audited entry that made it, or the
    run's end (its start when it never ended) for the record as stored. The PDF's creation
    date is this time, never the export's, so two exports of one revision stay identical."""
    entry = content.signoff.current.entry
    run = content.run
    text = entry.created_wall if entry is not None else (run.finished_wall or run.started_wall)
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


class _RecordTime(TimeStamp):
    """reportlab's document time stamp set to :func:`record_time` (UTC)."""

    def __init__(self, when: datetime) -> None:
        super().__init__(invariant=True)
        utc = when.astimezone(timezone.utc)
        self.t = utc.timestamp()
        self.lt = utc.timetuple()
        self.YMDhms = tuple(self.lt)[:6]


class _NumberedCanvas(Canvas):
    """Defers each page until the total is known, then stamps "Page N of M" on all of them.
    The document's dates are the record's (``record_time``, set by :func:`build_pdf`)."""

    record_time: datetime | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pages: list[dict] = []
        if self.record_time is not None:
            self._doc._timeStamp = _RecordTime(self.record_time)

    def showPage(self) -> None:  # noqa: N802 (reportlab API)
        self._pages.append(dict(self.__dict__))
        self._startPage()

    def save(self) -> None:
        total = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self.setFont(SANS, 7.5)
            self.drawRightString(PAGE_W - MARGIN, FOOTER_H - 4 * mm,
                                 f"Page {self._pageNumber} of {total}")
            super().showPage()
        super().save()


def _furniture(content: ReportContent):
    run = content.run
    title = pdf_safe(f"StorWatt Test Data Report — {clipped(content.product, HEADER_CHARS)} — "
                     f"run {run.run_id[:8]}")
    method = pdf_safe(content.method_label)
    banner = pdf_safe(content.compliance.banner())
    current = content.signoff.current
    footer = f"Revision {current.number} — record SHA-256 {current.sha256}"

    def draw(canvas: Canvas, _doc) -> None:
        canvas.saveState()
        top = PAGE_H - 9 * mm
        canvas.setFont(SANS, 7.5)
        canvas.drawString(MARGIN, top, title)
        if content.compliant:
            canvas.drawRightString(PAGE_W - MARGIN, top, f"Method {method}")
        else:
            canvas.setFillColor(colors.black)
            canvas.rect(MARGIN, top - 6.5 * mm, BODY_W, 5 * mm, stroke=0, fill=1)
            canvas.setFillColor(colors.white)
            # the banner names every criterion not met: smaller type rather than cut off
            size = min(8.5, 8.5 * (BODY_W - 4 * mm) /
                       canvas.stringWidth(banner, SANS_BOLD, 8.5))
            canvas.setFont(SANS_BOLD, size)
            canvas.drawCentredString(PAGE_W / 2, top - 5 * mm, banner)
            canvas.setFillColor(colors.black)
        canvas.setStrokeColor(GRID)
        canvas.line(MARGIN, FOOTER_H, PAGE_W - MARGIN, FOOTER_H)
        canvas.setFont(SANS, 7)
        canvas.drawString(MARGIN, FOOTER_H - 4 * mm, footer)
        canvas.restoreState()

    return draw


# --- sections -----------------------------------------------------------------------------------

def _cover(c: ReportContent) -> list:
    run, config = c.run, c.run.config
    sut = config.sut
    story: list = [Spacer(1, 6 * mm), P("Storage Power-Efficiency Test Data Report", "title")]
    if not c.compliant:
        banner = Table([[P(f"{c.compliance.banner()}. The compliance block below gives the "
                           "evidence for every criterion.", "banner")]],
                       colWidths=[BODY_W])
        banner.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), colors.black),
                                    ("FONTNAME", (0, 0), (-1, -1), SANS),
                                    ("TOPPADDING", (0, 0), (-1, -1), 6),
                                    ("BOTTOMPADDING", (0, 0), (-1, -1), 6)]))
        story += [banner, Spacer(1, 4 * mm)]
    method_title = f" — {c.method.title}" if c.method else ""
    story += [P("Product and configuration", "h2"), key_values([
        ("Product", c.product),
        ("Serial number", sut.serial or "not recorded"),
        ("Firmware", sut.firmware or "not recorded"),
        ("Configuration", f"{sut.drive_count} × {sut.drive_type or 'drives (type not declared)'}, "
                          f"{sut.raid or 'RAID not declared'}, raw capacity "
                          f"{sut.raw_capacity_bytes / 1e9:.10g} GB (1 GB = 10^9 bytes)"),
        ("Power supplies", _supplies(sut, {i.name for i in c.run.power_inputs})),
        ("Taxonomy classification", run.taxonomy or "not recorded"),
        ("Classification justification", config.classification_reason or "not recorded"),
        ("Capacity optimisations available", ", ".join(
            f"{v.com_id} ({'on' if v.on_during_test else 'off'} during the test)"
            for v in c.coms if v.available) or "none"),
        ("Load hosts / targets", f"{', '.join(sut.load_hosts) or 'local'} / "
                                 f"{', '.join(sut.targets) or 'simulated'}"),
    ]), P("Test", "h2"), key_values([
        ("Method", f"{run.method_name} {run.method_version}{method_title}"),
        ("Method identity", c.compliance.method_line()),
        ("Compliance", f"{c.compliance.label} (derived from the record under rules "
                       f"{c.compliance.rules_version}: every criterion below)"),
        ("Run id", run.run_id),
        ("Run status", run.status.value + (f": {run.error}" if run.error else "")),
        ("Started (UTC)", run.started_wall),
        ("Finished (UTC)", run.finished_wall or "not finished"),
        ("Duration", format_duration(run.duration_s)),
        ("Station", config.station or "not recorded"),
        ("Instrument connection test", config.instrument_check or "not recorded"),
        ("QA disposition", c.disposition_text),
        ("Sign-off", c.signoff.status + " (see Sign-off)"),
        ("Operator", config.operator or "not recorded"),
        ("Lab", config.lab),
        ("Workload engine", run.workload_engine or "not recorded"),
        ("Samples SHA-256", run.samples_sha256),
        (f"Record SHA-256 (revision {c.signoff.current.number})", c.signoff.current.sha256),
    ]), *_compliance_block(c), P("Result summary", "h2")]
    if c.problems:
        story.append(P("The following is missing, invalid or qualifies the results:", "body"))
        story += [P(f"• {p}", "body") for p in c.problems]
    else:
        story.append(P("Every metric the method asks for is VALID.", "body"))
    return story


UNMET = colors.HexColor("#f4cccc")  # a criterion not met: a row that also prints as grey


def _compliance_block(c: ReportContent) -> list:
    """Every compliance criterion with its verdict and evidence (app.rules.compliance): the run is
    compliant only when each one is met, whatever the method file claims."""
    rows = [[B("Criterion"), B("Verdict"), B("Evidence")]]
    rows += [[P(k.name), B(k.verdict), P(k.evidence)] for k in c.compliance.criteria]
    unmet = [("BACKGROUND", (0, i), (-1, i), UNMET) for i, k in
             enumerate(c.compliance.criteria, 1) if not k.met]
    return [P(f"Compliance: {c.compliance.label}", "h2"),
            grid_table(rows, [42 * mm, 18 * mm, BODY_W - 60 * mm], extra=unmet)]


def metric_value_text(line: MetricLine) -> str:
    if line.status == VALID:
        assert line.result is not None  # VALID: a stored result
        return fmt_sig(line.result.value)
    if line.status == INVALID:
        return invalid_value(line.result.value if line.result else None)
    return DASH


def metric_status_text(line: MetricLine) -> str:
    if line.status == VALID:
        return "VALID"
    return f"{line.status}: {line.reason}"


def _validity_cell(line: MetricLine) -> Paragraph:
    style = "cell" if line.status == VALID else "cellb"
    return P(metric_status_text(line), style)


def _metrics_page(c: ReportContent) -> list:
    story: list = [PageBreak(), P("Test Data Report — metrics", "h1"),
                   P("Operational power — ready idle test", "h2")]
    idle = c.metric_line("EP_RI")
    raw_gb = c.run.config.sut.raw_capacity_bytes / 1e9
    if idle is not None:
        watts = idle.result.avg_power_w if idle.result else None
        watts_text = (fmt_sig(watts) + " W") if is_number(watts) else DASH
        if idle.status != VALID and is_number(watts):
            watts_text = f"({fmt_sig(watts)} W)"
        story.append(grid_table([
            [B("Average watts"), P(watts_text), B("Run length"),
             P(format_duration(idle.result.run_length_s) if idle.result else DASH)],
            [B("Raw capacity tested"), P(f"{raw_gb:.10g} GB"), B(""), P("")],
            [B("EP_RI"), P(_with_unit(metric_value_text(idle), "GB/W")), B("Validity"),
             _validity_cell(idle)],
        ], [40 * mm, 45 * mm, 25 * mm, BODY_W - 110 * mm], header=False,
            extra=[("BACKGROUND", (0, 0), (0, -1), SHADE), ("BACKGROUND", (2, 0), (2, -1), SHADE)]))
    story += [P("Standard idle metric: GB per watt. 1 GB = 10^9 bytes; 1 GiB = 2^30 bytes; "
                "the two are never mixed in one figure.", "small"),
              P("Active power tests", "h2")]
    rows = [[B("Metric"), B("Value"), B("Unit"), B("Run length"), B("Average latency"),
             B("Average power"), B("Operations rate"), B("Validity")]]
    for line in c.metrics:
        if line.name == "EP_RI":
            continue
        r = line.result
        paren = line.status != VALID
        rows.append([B(line.name), B(metric_value_text(line)), P(line.unit),
                     P(format_duration(r.run_length_s) if r else DASH),  # as ready idle's
                     P(_maybe(r.avg_response_ms if r else None, "ms", paren)),
                     P(_maybe(r.avg_power_w if r else None, "W", paren)),
                     P(_maybe(r.ops_rate if r else None, r.ops_unit if r else "", paren)),
                     _validity_cell(line)])
        rows.append([P(""), P(f"{line.title} — {line.unit_text}", "small"), "", "", "", "", "",
                     ""])
    # the name column as wide as the longest name in bold (EP_HOTBAND split as "EP_HOTB /
    # AND", issue 41); the validity column, last, gives the room back
    name_w = max([16 * mm] + [stringWidth(line.name, SANS_BOLD, STYLES["cellb"].fontSize)
                              + 6.5 for line in c.metrics])
    widths = [name_w, 20 * mm, 15 * mm, 17 * mm, 19 * mm, 20 * mm, 24 * mm]
    widths.append(BODY_W - sum(widths))
    spans = [("SPAN", (1, i), (-1, i)) for i in range(2, len(rows), 2)]
    story.append(grid_table(rows, widths, extra=spans))
    story += [P("Power-related numbers are reported to at least three significant digits "
                "(method-notes §4); the xlsx export holds full precision. A value in parentheses "
                "is INVALID and is not a result. IOPS = I/Os per second; 1 MiB = 2^20 bytes.",
                "small"), _com_table(c), *_signoff_section(c)]
    return story


def _with_unit(text: str, unit: str) -> str:
    return text if text == DASH else f"{text} {unit}"


def _maybe(value: float | None, unit: str, parenthesise: bool) -> str:
    if not is_number(value):
        return DASH
    text = f"{fmt_sig(value)} {unit}".strip()
    return f"({text})" if parenthesise else text


def _com_table(c: ReportContent) -> KeepTogether:
    """The seed's COM disclosure: available and on separately, then the heuristic verdict
    and what it rests on (the station's ratio or the technician's audited entry)."""
    rows = [[B("Capacity optimisation"), B("Available in SUT?"), B("On during test?"),
             B("Heuristic result"), B("Evidence")]]
    for com in c.coms:
        rows.append([P(com.title), P("YES" if com.available else "NO"),
                     P("YES" if com.on_during_test else "NO"),
                     B(com.state.value) if com.available else P(DASH), P(com.detail or DASH)])
    widths = [38 * mm, 22 * mm, 20 * mm, 24 * mm]
    widths.append(BODY_W - sum(widths))
    return KeepTogether([P("Capacity optimisations (COM)", "h2"), grid_table(rows, widths),
                         P("Parity RAID follows the declared RAID level. A COM the lab could not "
                           "observe is NOT VERIFIED until a technician records the heuristic "
                           "result with its evidence (an audited entry, named here).", "small")])


def _signoff_section(c: ReportContent) -> list:
    """Revisions of the record (what each audited entry changed) and QA's approvals, each
    bound to the revision and hash it approved (app.signoff.revisions)."""
    so = c.signoff
    rows = [[B("Rev."), B("Recorded (UTC)"), B("By, on database"), B("What changed"),
             B("Record SHA-256")]]
    for r in so.revisions:  # who, and on which database (issue 26: the lab copy or the station)
        rows.append([P(r.number), P(r.entry.when if r.entry else
                                    wall_text(c.run.finished_wall or c.run.started_wall)),
                     [P(r.entry.author if r.entry else "StorWatt"), P(r.made_on, "small")],
                     P(r.summary), P(r.sha256, "mono")])
    widths = [10 * mm, 22 * mm, 24 * mm]
    widths += [BODY_W - sum(widths) - 50 * mm, 50 * mm]
    approvals = [P(f"QA approval: {a.describe()} — made on {a.entry.made_on or NOT_RECORDED}, "
                   f"inserted by {a.entry.db_role or INSERTER_NOT_RECORDED}", "body")
                 for a in so.approvals]
    return [KeepTogether([
        P("Sign-off", "h2"), P(f"This report: {so.status}.", "body"),
        grid_table(rows, widths), Spacer(1, 2 * mm),
        *(approvals or [P("QA approval: none recorded (Approve revision in the run's history, or "
                               "storwatt runs approve).", "body")])])]


def _phases_section(c: ReportContent) -> list:
    rows = [[B("#"), B("Phase"), B("Status"), B("Attempts"), B("Start"), B("End"),
             B("Measurement window"), B("Notes")]]
    for phase in c.run.phases:
        a = c.attempts.get(phase.index)
        window = (f"{fmt_seconds(a.window_start_s)} – {fmt_seconds(a.window_end_s)} "
                  f"({phase.info.measurement_intervals} × {c.interval_s:g} s)"
                  if a and a.has_window else DASH)
        rows.append([P(phase.index), P(phase.info.name), P(phase.status.value),
                     P(phase.attempts), P(fmt_seconds(phase.t_start)),
                     P(fmt_seconds(phase.t_end)), P(window), P(phase.error)])
    widths = [7 * mm, 24 * mm, 21 * mm, 14 * mm, 16 * mm, 16 * mm, 38 * mm]
    widths.append(BODY_W - sum(widths))
    return [P("Phases", "h2"), P("Times are run-relative (h:mm:ss from the run start).",
                                 "small"), grid_table(rows, widths)]


def _instruments_section(c: ReportContent) -> list:
    story: list = [PageBreak(), P("Instruments", "h1")]
    for ins in c.instruments:
        worst = (f"{fmt_sig(ins.worst_uncertainty_pct)} % "
                 f"(at {fmt_seconds(ins.worst_uncertainty_t)})"
                 if is_number(ins.worst_uncertainty_pct) else "not evaluable from the samples")
        story += [P(ins.role, "h2"), key_values([
            ("Identity", ins.identity), ("Resource / driver", f"{ins.resource or DASH} / "
                                                              f"{ins.driver or DASH}"),
            ("Calibration date", ins.calibration), ("Ranges used", ins.ranges),
            ("Sample interval", f"{fmt_sig(ins.sample_interval_s)} s typical, longest gap "
                                f"{fmt_sig(ins.longest_gap_s)} s" if is_number(
                                    ins.sample_interval_s) else "fewer than two samples"),
            ("Samples", f"{ins.samples} stored, {ins.flagged} excluded from averages"),
            ("Worst uncertainty", worst if ins.role == "Power meter" else DASH),
            ("Notes", ins.notes)])]
    story += [P("Maximum power (each figure names its window; method-notes §10)", "h2"),
              key_values(c.max_power_rows)]
    story += _phases_section(c)
    return story


def _power_inputs_section(c: ReportContent) -> list:
    """Each power input's meter and formula, and its power beside the total (none for a run
    with one meter)."""
    if not c.run.power_inputs:
        return []
    widths = [18 * mm, 38 * mm, 24 * mm, 60 * mm, 18 * mm]
    widths.append(BODY_W - sum(widths))
    rows = [[B(h) for h in power_inputs.INPUT_COLUMNS]] + [
        [P(cell) for cell in row] for row in power_inputs.input_rows(c.run)]
    return [P("Power inputs", "h2"), grid_table(rows, widths),
            P(power_inputs.COMBINATION_NOTE, "small"),
            power_inputs.inputs_chart(c.run, BODY_W, 60 * mm)]


def _search_section(c: ReportContent) -> list:
    results = [r for r in c.run.search_results if r.searched]
    if not results:
        return [P("Intensity search", "h2"), P("No intensity search was stored for this run.",
                                               "body")]
    rows = [[B("Profile"), B("Queue depth × jobs"), B("Operations rate"), B("Avg response"),
             B("Rate cap (read, write IOPS)"), B("Probes (QD: rate @ ms), note")]]
    for r in results:
        probes = "; ".join(f"{qd}: {fmt_sig(rate)} @ {fmt_sig(ms)}" for qd, rate, ms in r.probes)
        rows.append([P(r.profile), P(f"{r.queue_depth} × {r.jobs}"),
                     P(f"{fmt_sig(r.ops_rate)} {r.ops_unit}"),
                     P(f"{fmt_sig(r.avg_response_ms)} ms"),
                     P(f"{r.rate_iops[0]}, {r.rate_iops[1]}" if r.rate_iops else DASH),
                     P(probes + (f" — {r.note}" if r.note else "") or DASH)])
    widths = [16 * mm, 24 * mm, 28 * mm, 22 * mm, 28 * mm]
    widths.append(BODY_W - sum(widths))
    return [P("Intensity search (first pass)", "h2"), grid_table(rows, widths),
            *_generator_table(c)]


def _generator_table(c: ReportContent) -> list:
    """What fio alone reached with each profile's job file (searched, or pre-run only), and
    the access pattern its per-IO log showed in the same pre-run (method-notes §2)."""
    rows = [[P(r.profile), P(("" if r.searched else f"{r.pre_run_basis} — ") + "; ".join(
        f"{g.step}: {fmt_sig(g.iops)} IOPS" + (f" of {fmt_sig(g.asked_iops)} asked, shares "
                                               f"within {g.share_error_pts:.2f} points"
                                               if g.asked_iops else "")
        for g in r.generator) + ("" if r.searched or not r.note else f" — {r.note}") or DASH),
        P(_pattern_text(r.pattern, c) if r.pattern is not None or r.searched else
          "The trace's own offsets, replayed as recorded: not checked against the method.")]
        for r in c.run.search_results if r.generator or r.pattern is not None]
    if not rows:
        return []
    return [P("Load generator alone: each profile's own job file run on fio's null engine (no "
              "IO behind it) — a searched one at every listed step before its probes, MW2 and "
              "a trace replay once, just before their phase, at the rate they run at (a "
              "capped file at that rate × 100 / the method's share) — and once with fio's "
              "per-IO log on: a check of the generator and of the pattern the file draws, not "
              "a log of the measured run. A figure above the method's share of the ceiling "
              "is the generator's, and the search (or the pre-run's note) says so; that and "
              "a pattern off the method are NOT MET in the verdict.", "small"),
            grid_table([[B("Profile"), B("Step: generator alone"),
                         B("Access pattern measured in the same pre-run")], *rows],
                       [16 * mm, 60 * mm, BODY_W - 76 * mm])]


def _pattern_text(pattern: MeasuredPattern | None, c: ReportContent) -> str:
    if pattern is None:
        return DASH
    off = method_departures(pattern, c.method)
    return (f"{describe_pattern(pattern)}. {pattern.source}. "
            + (f"OFF THE METHOD: {'; '.join(off)}" if off else "As the method asks."))


def _phase_charts(c: ReportContent) -> list:
    story: list = [PageBreak(), P("Phase charts", "h1"),
                   P("Solid line: usable power samples; dashed: inlet temperature (right axis); "
                     "vertical dotted lines: the measurement window the metric was computed "
                     "over. Efficiency charts show each interval's EP (circles), the weighted "
                     "moving average (squares, dashed) and the ±tolerance band around it.",
                     "small")]
    tolerance = charts.stability_tolerance(c.method)
    height = 52 * mm
    for phase in c.run.phases:
        if phase.t_start is None:
            continue
        attempt = c.attempts.get(phase.index)
        restarted = (f" — attempt {phase.attempts} of {phase.attempts}, charts show the last"
                     if phase.attempts > 1 else "")
        block = [P(f"{phase.index}. {phase.info.name} ({phase.info.kind.value}) — "
                   f"{phase.status.value}{restarted}", "h2"),
                 charts.power_chart(c.run, phase, attempt, BODY_W, height)]
        if phase.info.kind is PhaseKind.ACTIVE:
            for drawing in (charts.ops_chart(c.run, phase, attempt, BODY_W, height),
                            charts.efficiency_chart(c.run, phase, attempt, tolerance, BODY_W,
                                                    height)):
                if drawing is not None:
                    block.append(drawing)
        story.append(KeepTogether(block))  # a phase's charts stay on one page
    return story


def _sweep_cell(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return fmt_sig(value) if isinstance(value, float) and is_number(value) else DASH


def _sweep_section(c: ReportContent) -> list:
    """The stepped-intensity sweep (method-notes §6): its table, why it ended, its plots."""
    table = sweep_table(c.run)
    if table is None:
        return []
    head = [B(name) for name in SWEEP_COLUMNS]
    rows = [head] + [[P(_sweep_cell(v)) for v in row] for row in table.rows()]
    width = BODY_W / len(SWEEP_COLUMNS)
    story: list = [PageBreak(), P(table.title, "h1"),
                   P(f"Each step ran {table.sweep.profile} at {table.sweep.unit_iops:g} IOPS per "
                     f"{table.sweep.unit} with {table.sweep.queue_depth_per_unit} outstanding IOs "
                     f"per {table.sweep.unit} (at most {table.sweep.max_queue_depth}); the sweep "
                     f"stops when the average response time passes {table.limit_ms:g} ms or the "
                     f"IOPS rise less than {table.sweep.min_gain_pct:g} % over the step before "
                     f"(method-notes §6). Ended: {escape(table.ended)}. Not an Emerald metric.",
                     "small"),
                   grid_table(rows, [width] * len(SWEEP_COLUMNS))]
    return story + [KeepTogether([d]) for d in charts.sweep_charts(table, BODY_W, 58 * mm)]


def _di_section(c: ReportContent) -> list:
    """The PTS demand-intensity matrix (method-notes §6): cells, saturation points, sweet
    spots, the IOPS v response-time curve and the histogram compare per thread loop."""
    report = di_report(c.run)
    if report is None:
        return []
    m = report.matrix
    cells = [[B(n) for n in DI_CELL_COLUMNS]] + [[P(_sweep_cell(v)) for v in row]
                                                 for row in report.cell_rows()]
    sweet = [[B(n) for n in DI_SWEET_COLUMNS]] + [[P(_sweep_cell(v)) for v in row]
                                                  for row in report.sweet_rows()]
    story: list = [PageBreak(), P(report.title, "h1"),
                   P(f"Each cell ran {escape(m.profile)} unthrottled at its thread count × "
                     "queue depth. Saturation point of a thread loop: the first queue depth "
                     f"whose next depth gains less than {m.saturation_gain_pct:g} % IOPS; sweet "
                     "spot: the highest IOPS whose average response time is within the "
                     f"ceiling (method-notes §6). Saturation: {report.saturation_text()}. "
                     f"Workload preconditioning: {escape(report.steady_text())}. "
                     "Not an Emerald metric.", "small"),
                   grid_table(cells, [BODY_W / len(DI_CELL_COLUMNS)] * len(DI_CELL_COLUMNS)),
                   Spacer(1, 3 * mm), P("Sweet spots", "h2"),
                   grid_table(sweet, [BODY_W / len(DI_SWEET_COLUMNS)] * len(DI_SWEET_COLUMNS)),
                   KeepTogether([charts.di_curve_chart(report, BODY_W, 70 * mm)])]
    if (steady := charts.steady_state_chart(report, BODY_W, 55 * mm)) is not None:
        story.append(KeepTogether([steady]))
    basis = histogram_basis(c.run.config)
    return story + [KeepTogether([d]) for d in charts.di_histogram_charts(report, BODY_W,
                                                                          62 * mm, basis)]


def _histograms(c: ReportContent) -> list:
    story: list = [PageBreak(), P("Response-time histograms", "h1")]
    if not c.run.histograms:
        return story + [P("No response-time histogram was stored for this run.", "body")]
    basis = histogram_basis(c.run.config)
    story.append(P(f"{basis.title} of each profile's measurement window (fio's latency "
                   "buckets), with the confidence levels (method-notes §5; n/a when the IO "
                   "count cannot support a level, N < 1/(1 − p)) and the response-time "
                   "ceiling." + (f" {basis.note}" if basis.note else ""), "small"))
    max_avg_ms = c.method.response_time.max_avg_ms if c.method else None
    for hist in c.run.histograms:
        total = sum(hist.bins.values())
        levels = ", ".join(lvl.text() for lvl in hist.levels())
        story.append(KeepTogether([
            charts.histogram_chart(hist, f"{hist.profile} (phase {hist.phase_index}): "
                                         f"{total} IOs", BODY_W, 62 * mm, basis),
            P(f"Confidence levels — {levels or DASH}; ceiling {fmt_sig(hist.ceiling_ms)} ms, "
              f"{hist.above_ceiling} IOs above it. "
              + ceiling_meaning(hist.ceiling_ms, hist.above_ceiling, max_avg_ms), "small"),
            Spacer(1, 3 * mm)]))
    return story


def _events(c: ReportContent) -> list:
    events = list(c.events)
    story: list = [PageBreak(), P("Event log", "h1")]
    if not events:
        return story + [P("No events were stored.", "body")]
    left_out = 0
    if len(events) > EVENT_LIMIT:
        left_out = len(events) - EVENT_LIMIT
        events = events[:EVENT_LIMIT // 2] + events[-EVENT_LIMIT // 2:]
    rows = [[B("Time"), B("Level"), B("Phase"), B("Message")]]
    for e in events:
        style = "cellb" if e.level in ("WARNING", "ERROR") else "cell"
        rows.append([P(fmt_seconds(e.t)), P(e.level, style),
                     P(DASH if e.phase_index is None else e.phase_index), P(e.message, style)])
    story.append(grid_table(rows, [18 * mm, 17 * mm, 12 * mm, BODY_W - 47 * mm]))
    if left_out:
        story.append(P(f"{left_out} events in the middle of the log are left out here; the xlsx "
                       "export's Events sheet has all of them.", "small"))
    return story + _audit(c)


def _audit(c: ReportContent) -> list:
    """QA's notes, dispositions, COM results and approvals (append-only; the latest
    disposition is the run's)."""
    story: list = [P("QA audit trail", "h2"), P(f"Disposition: {c.disposition_text}", "body")]
    if not c.run.audit:
        return story + [P("No QA notes or dispositions were recorded.", "small")]
    rows = [[B("Recorded (UTC)"), B("Entry"), B("By"), B("Text")]]
    for e in c.run.audit:
        rows.append([P(e.created_wall[:19].replace("T", " ")), P(e.what), P(e.author),
                     P(e.text)])
    story.append(grid_table(rows, [28 * mm, 40 * mm, 28 * mm, BODY_W - 96 * mm]))
    return story


def _appendix(c: ReportContent) -> list:
    story: list = [PageBreak(), P("Appendix — workload job files as run", "h1")]
    jobs = c.run.job_files
    if not jobs:
        return story + [P("No workload job file was stored for this run.", "body")]
    for index, text in sorted(jobs.items()):
        phase = c.run.phase(index)
        story += [P(f"{index}. {phase.info.name}", "h2"),
                  Preformatted(pdf_safe(text.rstrip()), STYLES["mono"], maxLineLength=110,
                               newLineChars="  ")]
    return story


# --- assembly -------------------------------------------------------------------------------------

class _OutlinedDoc(BaseDocTemplate):
    """Adds a PDF outline: a bookmark per section (h1) and per subsection or phase (h2), so a
    report archived for years can be navigated in any reader."""

    def afterFlowable(self, flowable) -> None:  # noqa: N802 (reportlab API)
        style = getattr(getattr(flowable, "style", None), "name", "")
        if style not in ("h1", "h2"):
            return
        self._outlined = getattr(self, "_outlined", 0) + 1
        key = f"outline-{self._outlined}"
        if style == "h1":
            self._under_section = True
        # the cover's subsections come before any section: they are top-level entries
        level = 1 if style == "h2" and getattr(self, "_under_section", False) else 0
        self.canv.bookmarkPage(key)
        self.canv.addOutlineEntry(flowable.getPlainText(), key, level=level, closed=True)


def build_pdf(content: ReportContent, path: Path | BinaryIO) -> Path | BinaryIO:
    """Write the Test Data Report of ``content`` to ``path`` (a file name, or a binary
    stream: the export builds in memory and writes the file itself)."""
    run = content.run
    doc = _OutlinedDoc(path if hasattr(path, "write") else str(path), pagesize=A4,
                       leftMargin=MARGIN, rightMargin=MARGIN,
                       topMargin=HEADER_H, bottomMargin=FOOTER_H + 3 * mm,
                       title=f"Test Data Report {run.run_id}",
                       author=clipped(run.config.operator, HEADER_CHARS) or "StorWatt",
                       subject=pdf_safe(content.method_label), creator="StorWatt",
                       invariant=True,
                       # reportlab's canvas starts in the standard Helvetica, which would be
                       # named (not embedded) on every page: start in the embedded family
                       initialFontName=SANS)
    frame = Frame(MARGIN, FOOTER_H + 3 * mm, BODY_W, PAGE_H - HEADER_H - FOOTER_H - 3 * mm,
                  id="body", leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
    doc.addPageTemplates([PageTemplate("page", [frame], onPage=_furniture(content))])
    story = (_cover(content) + _metrics_page(content) + _instruments_section(content)
             + _power_inputs_section(content) + [Spacer(1, 4 * mm)] + _search_section(content)
             + _sweep_section(content) + _di_section(content) + _phase_charts(content)
             + _histograms(content) + _events(content) + _appendix(content))
    use_a85 = rl_config.useA85
    rl_config.useA85 = 0  # binary streams: pure-Python ASCII85 costs ~0.3 s on long runs
    try:
        canvas = type("RecordCanvas", (_NumberedCanvas,), {"record_time": record_time(content)})
        doc.build(story, canvasmaker=canvas)
    finally:
        rl_config.useA85 = use_a85
    return path


def _supplies(sut, measured: set[str]) -> str:
    """``2 × 1600 W nameplate, 1+1 redundant; input psu-a on supply 1, …`` — only the inputs
    this run measured: a SUT file's mapping of inputs the run never read is no fact of this
    run (issue 41; one meter on the total measures no named input)."""
    supplies = sut.power_supplies
    if not supplies.declared:
        return "not declared"
    text = (f"{supplies.count} × {supplies.nameplate_w:g} W nameplate, {supplies.redundancy} "
            "redundant")
    mapped = [(name, n) for name, n in sut.input_supplies if name in measured]
    if mapped:
        text += "; " + ", ".join(f"input {name} on supply {n}" for name, n in mapped)
    return text
