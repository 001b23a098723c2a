"""The export's data sheets written into an XlsxWriter sheet as ready-made row XML.

WHY: XlsxWriter spends ~8 µs per cell in its per-call bookkeeping (argument conversion,
dimension checks, a cell record, then the XML), so the Samples sheet of an 8-hour run at 1 Hz
(~37 000 rows × 12 columns) alone took ~3 s of the export. Rendering the same ``<row>``/``<c>``
elements directly costs well under 1 µs a cell. The XML is exactly what XlsxWriter's
``write()`` produces in ``constant_memory`` mode (numbers as ``%.16G``, booleans ``t="b"``,
strings inline, empty cells omitted), so the file reads back the same:
tests/test_reports_xlsx_rows.py compares the two byte for byte and fails if an XlsxWriter
upgrade changes what the shortcut relies on.

The shortcut uses XlsxWriter's constant-memory row stream (the worksheet's temporary row file,
its one-row buffer and its dimension record): the only place those private names are touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

import numpy as np

from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet


#: XlsxWriter's cell-text limit (Excel's); longer strings are cut there as write_string does
MAX_STRING = 32767


def _cells(letter: str, first_excel_row: int, values: Sequence) -> list[str]:
    """One column's ``<c>`` elements, typed per value as XlsxWriter's ``write()`` does (None,
    "" and NaN/inf leave the cell empty); a column of plain numbers takes a shorter path."""
    rows = range(first_excel_row, first_excel_row + len(values))
    if {type(v) for v in values} <= {float, int, type(None)}:
        return ["" if v is None or not math.isfinite(v)  # NaN/inf: empty, never an error
                else f'<c r="{letter}{r}"><v>{v:.16G}</v></c>' for r, v in zip(rows, values)]
    return [_cell(letter, r, v) for r, v in zip(rows, values)]


def _cell(letter: str, row: int, value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return f'<c r="{letter}{row}" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return ""
        return f'<c r="{letter}{row}"><v>{value:.16G}</v></c>'
    if isinstance(value, str):
        text = value[:MAX_STRING]
        preserve = ' xml:space="preserve"' if text[:1].isspace() or text[-1:].isspace() else ""
        return f'<c r="{letter}{row}" t="inlineStr"><is><t{preserve}>{escape(text)}</t></is></c>'
    raise TypeError(f"cell {letter}{row}: cannot write a {type(value).__name__} ({value!r}); "
                    "only numbers, booleans and text go into the export")


def rows_xml(first_row: int, columns: Sequence[Sequence]) -> str:
    """``<row>`` elements for zero-based ``first_row`` onwards; ``columns`` are equal-length
    lists with None for an empty cell. A row with no value is left out, as XlsxWriter does.

    Columns of plain numbers (most cells of a long run) are not rendered cell by cell: each
    row is one ``str.format`` of a template holding the row's cells, one template per pattern
    of empty numeric cells (a handful per sheet) — half the time of a cell-by-cell render on
    a 24 h run (issue 27). Other columns are rendered per cell and placed into the template."""
    first_excel_row = first_row + 1
    count = len(columns[0]) if columns else 0
    numeric = [{type(v) for v in values} <= {float, int, type(None)} for values in columns]
    letters = [xl_col_to_name(col) for col in range(len(columns))]
    present = np.zeros(count, dtype=np.int64)  # bit k: numeric column k holds a number
    cells: list[Sequence] = []
    for col, values in enumerate(columns):
        if numeric[col]:
            with np.errstate(invalid="ignore"):
                finite = np.isfinite(np.array(values, dtype=np.float64))  # None → NaN
            present |= finite.astype(np.int64) << col
            cells.append(values)
        else:
            cells.append(_cells(letters[col], first_excel_row, values))
    templates: dict[int, str] = {}
    rows = []
    for r, key, row in zip(range(first_excel_row, first_excel_row + count), present.tolist(),
                           zip(*cells)):
        template = templates.get(key)
        if template is None:
            template = templates[key] = _template(letters, numeric, key)
        text = template.format(r, *row)
        if len(text) > len(f'<row r="{r}"></row>'):
            rows.append(text)
    return "".join(rows)


def _template(letters: list[str], numeric: list[bool], present: int) -> str:
    """A ``<row>`` template: ``{0}`` the row number, ``{k+1}`` column k — a number formatted
    as XlsxWriter writes it, or a cell already rendered; absent numbers leave no cell."""
    parts = ['<row r="{0}">']
    for col, letter in enumerate(letters):
        if not numeric[col]:
            parts.append(f"{{{col + 1}}}")
        elif present >> col & 1:
            parts.append(f'<c r="{letter}{{0}}"><v>{{{col + 1}:.16G}}</v></c>')
    return "".join(parts) + "</row>"


class ColumnSheet(Worksheet):
    """A worksheet that also takes a whole block of column data in one call (constant-memory
    workbooks only: the block goes straight into the row stream)."""

    def write_columns(self, first_row: int, columns: Sequence[Sequence]) -> int:
        """Write ``columns`` (equal-length lists, None = empty) from ``first_row`` down;
        returns the number of rows. Rows above must already be written; nothing may be
        written into the block's rows afterwards (XlsxWriter then refuses it, as it refuses
        any earlier row in constant-memory mode)."""
        if not self.constant_memory:
            raise ValueError("ColumnSheet.write_columns needs a constant_memory workbook")
        count = len(columns[0]) if columns else 0
        if not count:
            return 0
        if first_row < self.previous_row or (self.dim_rowmax is not None
                                             and first_row <= self.dim_rowmax):
            raise ValueError(f"ColumnSheet.write_columns: row {first_row} is above rows "
                             "already written (constant_memory writes rows in order)")
        last_row = first_row + count - 1
        self._write_single_row(first_row)  # flush the buffered row above the block
        self.fh.write(rows_xml(first_row, columns))
        self._check_dimensions(first_row, 0)
        self._check_dimensions(last_row, len(columns) - 1)
        self.previous_row = last_row + 1  # a later write below the block flushes normally
        return count
