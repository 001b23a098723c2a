"""Reading the reports back: a PDF's text (pdftotext or pypdf) and an xlsx sheet's rows."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pypdf import PdfReader

from app.reports.xlsx import METRIC_COLUMNS


def pdf_text(path: Path) -> str:
    """The PDF as pdftotext reads it, whitespace collapsed."""
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                         text=True, check=True).stdout
    return " ".join(out.split())


def pdf_pages(path: Path) -> list[str]:
    """Each page's text as pypdf extracts it, whitespace collapsed."""
    return [re.sub(r"\s+", " ", page.extract_text()) for page in PdfReader(path).pages]


def text_of(path: Path) -> str:
    """The whole PDF's text as pypdf extracts it, whitespace collapsed."""
    return re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(path).pages))


def sheet_rows(book, name: str, columns: tuple[str, ...], first_col: int = 0) -> list[dict]:
    rows = book[name].iter_rows(values_only=True)
    header = next(rows)[first_col:first_col + len(columns)]
    assert tuple(header) == columns, f"{name} columns changed: {header}"
    return [dict(zip(columns, r[first_col:first_col + len(columns)])) for r in rows
            if any(v is not None for v in r[first_col:first_col + len(columns)])]


def metric_rows(book) -> dict[str, dict]:
    """Metric rows of the Test Data Report sheet: below the header whose column A is
    ``metric``, rows whose column A starts with EP_ or COM_."""
    rows = list(book["Test Data Report"].iter_rows(values_only=True))
    header = next(i for i, r in enumerate(rows) if r[0] == "metric")
    assert tuple(rows[header][:len(METRIC_COLUMNS)]) == METRIC_COLUMNS
    out = {}
    for r in rows[header + 1:]:
        if isinstance(r[0], str) and r[0].startswith(("EP_", "COM_")):
            out[r[0]] = dict(zip(METRIC_COLUMNS, r))
    return out
