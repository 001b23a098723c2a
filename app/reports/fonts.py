"""The fonts every PDF report draws with, embedded in the file.

A lab archives its reports for years and opens them in readers not yet written; a PDF that
only names the standard Helvetica/Courier leaves the glyphs to whatever the reader substitutes.
The reports therefore embed (as subsets) Bitstream Vera Sans, the TrueType family reportlab
itself ships under the Bitstream Vera licence (free to embed and redistribute, and bundled by
the installers with reportlab's data): no font file is taken from the machine, so two exports
on any station stay byte-identical. Vera covers every character of Windows-1252, the set
:func:`app.reports.text.pdf_safe` reduces a report's text to.

No free monospaced face ships with reportlab, so :data:`MONO` (job files, hashes) is the same
family: the appendix keeps its line breaks and indentation, not column alignment.
"""

from __future__ import annotations

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

SANS = "StorWattSans"
SANS_BOLD = "StorWattSans-Bold"
SANS_ITALIC = "StorWattSans-Italic"
SANS_BOLD_ITALIC = "StorWattSans-BoldItalic"
MONO = SANS

#: font name → the TrueType file in reportlab's own font folder (its TTF search path)
_FILES = {SANS: "Vera.ttf", SANS_BOLD: "VeraBd.ttf", SANS_ITALIC: "VeraIt.ttf",
          SANS_BOLD_ITALIC: "VeraBI.ttf"}


def register_fonts() -> None:
    """Register the family once (reportlab keeps a process-wide registry), so ``<b>`` and
    ``<i>`` in a paragraph pick its bold and italic faces."""
    if SANS in pdfmetrics.getRegisteredFontNames():
        return
    for name, file in _FILES.items():
        pdfmetrics.registerFont(TTFont(name, file))
    pdfmetrics.registerFontFamily(SANS, normal=SANS, bold=SANS_BOLD, italic=SANS_ITALIC,
                                  boldItalic=SANS_BOLD_ITALIC)


register_fonts()  # the report modules' styles name these fonts when they are imported
