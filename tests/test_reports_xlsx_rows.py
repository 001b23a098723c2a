"""The block writer of long sheets (app/reports/xlsx_rows.py) produces byte for byte the sheet
XML XlsxWriter writes cell by cell: if an XlsxWriter upgrade changes its row stream, this fails
before a report does."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pytest
import xlsxwriter

from app.reports.xlsx_rows import ColumnSheet

HEADER = ("t_s", "phase", "flags", "in_window", "nothing", "big")
COLUMNS = [
    [0.0, 1.5, None, 1e-7, 123456789.123456789, float("nan"), 2.0],
    [1, 1, 2, None, 2, 3, 3],
    ["a&b", None, "<clip>", " lead", "trail ", "", "x" * 40_000],
    [True, None, False, True, None, None, True],
    [None] * 7,
    [1e300, -0.0, 3, 7.25, None, "n/a", 1 / 3],  # mixed, as a Histograms level column
]


def _book(path: Path, fill) -> None:
    book = xlsxwriter.Workbook(str(path), {"constant_memory": True})
    header = book.add_format({"bold": True})
    sheet = book.add_worksheet("Samples", worksheet_class=ColumnSheet)
    sheet.write_row(0, 0, HEADER, header)
    fill(sheet)
    sheet.write(len(COLUMNS[0]) + 1, 0, "below the block")
    sheet.set_column(0, 5, 11)
    book.close()


def _sheet_xml(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        return archive.read("xl/worksheets/sheet1.xml").decode()


def _row_major(sheet) -> None:
    """The reference: XlsxWriter's own ``write()``, cell by cell in row order."""
    for row, values in enumerate(zip(*COLUMNS), start=1):
        for col, value in enumerate(values):
            if not (isinstance(value, float) and math.isnan(value)):  # write() refuses NaN
                sheet.write(row, col, value)


def test_block_xml_equals_xlsxwriter_cell_by_cell(tmp_path: Path) -> None:
    _book(tmp_path / "cells.xlsx", _row_major)
    _book(tmp_path / "block.xlsx", lambda sheet: sheet.write_columns(1, COLUMNS))
    cells, block = _sheet_xml(tmp_path / "cells.xlsx"), _sheet_xml(tmp_path / "block.xlsx")
    assert '<dimension ref="A1:F9"/>' in block
    assert block == cells


def test_block_refuses_rows_already_written(tmp_path: Path) -> None:
    book = xlsxwriter.Workbook(str(tmp_path / "x.xlsx"), {"constant_memory": True})
    sheet = book.add_worksheet("Samples", worksheet_class=ColumnSheet)
    sheet.write_row(0, 0, HEADER)
    sheet.write(3, 0, 1.0)
    with pytest.raises(ValueError, match="row 1 is above rows already written"):
        sheet.write_columns(1, COLUMNS)
    book.close()


def test_block_needs_constant_memory(tmp_path: Path) -> None:
    book = xlsxwriter.Workbook(str(tmp_path / "x.xlsx"))
    sheet = book.add_worksheet("Samples", worksheet_class=ColumnSheet)
    with pytest.raises(ValueError, match="constant_memory"):
        sheet.write_columns(1, COLUMNS)
    book.close()
