"""Text is data, never terminal control (issue 40 §3): the one rule of which characters a typed
text may hold, and the one way stored text is shown on a terminal.

A SUT vendor typed as ``Ev\\e]0;pwned\\a\\e[2J`` was stored and ``storwatt runs list`` printed it
raw: it cleared the QA engineer's screen, set the window title and, with OSC 52, asked the
terminal to write the clipboard; a bidi override reorders what a report's reader sees and a
zero-width character makes two serials look equal. So every typed text field (SUT vendor,
model, serial, firmware, RAID, operator, notes, station name, method title, COM evidence,
audit text) refuses, at entry, the characters of Unicode's control (Cc: C0, DEL, C1) and
format (Cf: bidi embeddings, overrides and isolates, zero-width characters, the BOM) classes,
surrogates and the line and paragraph separators; multi-line text (notes, evidence) keeps
its line feeds and tabs. And since other stations (and older versions) wrote the databases a
QA PC reads, every command-line output of stored text goes through :func:`terminal_safe`,
which shows such a character as its escape (``\\x1b``, ``\\u202e``) instead of sending it.
"""

from __future__ import annotations

import unicodedata

#: Unicode classes a typed text never holds: control, format, surrogate, line/paragraph sep.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: what multi-line text (notes, evidence) may hold of them
MULTILINE_ALLOWED = frozenset("\n\t")


def is_control(char: str, multiline: bool = False) -> bool:
    """Whether ``char`` is terminal or layout control rather than text (the module's rule)."""
    if multiline and char in MULTILINE_ALLOWED:
        return False
    return unicodedata.category(char) in REFUSED_CATEGORIES


def code_name(char: str) -> str:
    """A character as a message names it: ``U+001B``."""
    return f"U+{ord(char):04X}"


def control_characters(text: str, multiline: bool = False) -> list[str]:
    """The distinct refused characters in ``text``, in order of first appearance."""
    found: list[str] = []
    if text.isprintable():  # the common case, in C: no character of a refused class
        return found
    for char in text:
        if not char.isprintable() and is_control(char, multiline) and char not in found:
            found.append(char)
    return found


def refusal(text: str, what: str, multiline: bool = False) -> str | None:
    """One line saying why ``text`` cannot be ``what``, or None when it holds only text."""
    found = control_characters(text, multiline)
    if not found:
        return None
    named = ", ".join(code_name(c) for c in found[:3]) + (" …" if len(found) > 3 else "")
    breaks = "" if multiline else "line breaks, tabs, "
    return (f"{what} cannot hold {breaks}control, bidi or zero-width characters (found "
            f"{named}): type it as plain text")


def terminal_safe(text: str, multiline: bool = False) -> str:
    """``text`` with every refused character shown as its escape; a line feed too unless
    ``multiline`` (a table row stays one line)."""
    if (text.replace("\n", "").replace("\t", "") if multiline else text).isprintable():
        return text  # the common case, in C: every refused class fails ``isprintable``
    return "".join(c if c.isprintable() or not is_control(c, multiline) else _escape(c)
                   for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
