"""Number and text formatting shared by the PDF and the xlsx display formats.

Figures are printed as the seed's sample report prints them (method-notes §4) via
:func:`app.metrics.formatting.format_figure`; cells and storage keep full precision. A number
that is not valid is never printed bare: callers use :func:`invalid_value` (parentheses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeGuard

from app.metrics.formatting import format_figure

DASH = "—"

#: Characters the PDF's standard fonts (WinAnsi) cannot show, with plain replacements, so no
#: text in a report turns into blank boxes (job files and log lines are free text).
_PDF_REPLACEMENTS = {
    "≥": ">=", "≤": "<=", "→": "->", "←": "<-", "≈": "~", "×": "x", "−": "-", "…": "...",
    "⁹": "^9", "³": "^3", "²": "^2", "⁰": "^0", "\t": "    ",
}


def is_number(value: float | None) -> TypeGuard[float]:
    """A figure to print (not None, not NaN); narrows ``value`` for the type checker."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def fmt_sig(value: float | None) -> str:
    """A figure as the report prints it (method-notes §4); a dash when there is none."""
    return format_figure(value) if is_number(value) else DASH


def invalid_value(value: float | None) -> str:
    """An INVALID figure: in parentheses, so it cannot be read as a valid result."""
    return f"({fmt_sig(value)})" if is_number(value) else DASH


def fmt_seconds(seconds: float | None) -> str:
    """Run-relative time as ``h:mm:ss`` (``m:ss`` under an hour; tenths for short phases)."""
    if not is_number(seconds):
        return DASH
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    tenths = f".{int((seconds - whole) * 10)}" if seconds < 600 else ""
    return f"{sign}{h}:{m:02d}:{s:02d}{tenths}" if h else f"{sign}{m}:{s:02d}{tenths}"


def pdf_safe(text: str) -> str:
    """Text the PDF's standard fonts can draw (no silent blank boxes)."""
    for char, replacement in _PDF_REPLACEMENTS.items():
        text = text.replace(char, replacement)
    return text.encode("cp1252", errors="replace").decode("cp1252")


def flag_text(flags: Sequence[frozenset[str]]) -> list[str | None]:
    """Each sample's flags as ``O,R`` (None: no flag), spelt once per distinct set: a 24 h
    run has ~400,000 readings and a handful of distinct sets (issue 27)."""
    text = {f: ",".join(sorted(f)) or None for f in set(flags)}
    return [text[f] for f in flags]
