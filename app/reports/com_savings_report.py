"""The COM savings table (:mod:`app.metrics.com_savings`) as an xlsx sheet and a PDF page.

The xlsx keeps full precision (numbers, not text; docs/method-notes.md §4) and the PDF prints
the figures as the seed's tables do; both carry the cost rates the savings assume and the
two run ids, so a reader can trace every figure to a stored run.
"""

from __future__ import annotations

from pathlib import Path

import xlsxwriter
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from xml.sax.saxutils import escape

from app.metrics.com_savings import ComSavings
from app.reports.fonts import SANS, SANS_BOLD

TITLE = "COM savings: baseline vs optimised configuration"
SOURCE = ("Method: The Green Grid COM study (docs/method-notes.md §6): GB/W from ready-idle "
          "power, IO/W from the active workload's power; CAPEX from fewer drives and "
          "enclosures; OPEX from less installed (active) power.")


def write_savings_xlsx(savings: ComSavings, path: Path) -> Path:
    """One sheet: any caveat, the before/after table (numbers), then the CAPEX/OPEX rows as
    numbers in a currency (or their unit's) format, never text."""
    workbook = xlsxwriter.Workbook(str(path))
    try:
        sheet = workbook.add_worksheet("COM savings")
        bold = workbook.add_format({"bold": True})
        warning = workbook.add_format({"bold": True, "font_color": "#b00020"})
        money = workbook.add_format({"num_format": '"$"#,##0;-"$"#,##0;"$"0'})
        whole = workbook.add_format({"num_format": "#,##0"})
        sheet.set_column(0, 0, 34)
        sheet.set_column(1, 4, 22)
        sheet.write(0, 0, TITLE, bold)
        for i, caveat in enumerate(savings.caveats, 1):
            sheet.write(i, 0, caveat, warning)
        head = 2 + len(savings.caveats)
        sheet.write_row(head, 0, ["Figure", savings.baseline.label, savings.optimised.label,
                                  "Change", "Change is"], bold)
        for i, row in enumerate(savings.rows(), head + 1):
            sheet.write(i, 0, row.figure)
            sheet.write_number(i, 1, row.baseline)
            sheet.write_number(i, 2, row.optimised)
            if row.change_kind:
                sheet.write_number(i, 3, row.change)
                sheet.write(i, 4, {"pct": "% of baseline", "count": "difference",
                                   "ratio": "optimised / baseline"}[row.change_kind])
        top = head + 2 + len(savings.rows())
        sheet.write_row(top - 1, 0, ["Savings", "Value", "Unit"], bold)
        for i, cost in enumerate(savings.cost_rows(), top):
            sheet.write(i, 0, cost.figure, bold)
            sheet.write_number(i, 1, cost.value, money if cost.is_money else whole)
            sheet.write(i, 2, cost.unit)
        sheet.write(top + len(savings.cost_rows()) + 1, 0, SOURCE)
    finally:
        workbook.close()
    return path


def write_savings_pdf(savings: ComSavings, path: Path) -> Path:
    """One A4 page: the before/after table and the CAPEX/OPEX table."""
    styles = getSampleStyleSheet()
    title = styles["Title"].clone("title", fontName=SANS_BOLD)
    normal = styles["Normal"].clone("normal", fontName=SANS)
    grid = TableStyle([("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
                       ("FONTNAME", (0, 0), (-1, -1), SANS),
                       ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef5")),
                       ("FONTSIZE", (0, 0), (-1, -1), 8.5),
                       ("ALIGN", (1, 1), (-1, -1), "RIGHT")])
    head = normal.clone("head", fontSize=8.5, leading=10)
    compare = [[Paragraph(escape(text), head) for text in
                ("Figure", f"Baseline: {savings.baseline.label}",
                 f"Optimised: {savings.optimised.label}", "Change")]]
    compare += [list(row.texts()) for row in savings.rows()]
    costs = [["Savings", "Value"]] + [list(r.texts()) for r in savings.cost_rows()]
    cost_table = Table(costs, colWidths=[55 * mm, 115 * mm])
    cost_table.setStyle(TableStyle([*grid.getCommands(), ("ALIGN", (1, 1), (-1, -1), "LEFT")]))
    compare_table = Table(compare, colWidths=[55 * mm, 45 * mm, 45 * mm, 25 * mm])
    compare_table.setStyle(grid)
    warning = normal.clone("warning", textColor=colors.HexColor("#b00020"), fontName=SANS_BOLD)
    story = [Paragraph(escape(TITLE), title),
             *(Paragraph(escape(caveat), warning) for caveat in savings.caveats),
             compare_table, Spacer(1, 6 * mm),
             cost_table, Spacer(1, 4 * mm), Paragraph(escape(SOURCE), normal)]
    SimpleDocTemplate(str(path), pagesize=A4, title=TITLE, initialFontName=SANS).build(story)
    return path
