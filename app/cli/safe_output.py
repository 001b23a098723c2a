"""Nothing the command line prints can drive the terminal (issue 40 §3).

Stored text comes from other stations and older versions (a lab database is read by every QA
PC), and typed paths and values are quoted in refusals, so the typed-text rule at entry
(``app.core.plain_text``) cannot be the only guard. Every command runs with its standard
output and error behind :class:`TerminalSafeStream`, which shows each control, bidi or
zero-width character as its escape (``\\x1b``, ``\\u202e``) and lets line feeds and tabs
through. A table row that must stay one line escapes its cells' line feeds too, with
:func:`cell`; a stored text that may run over lines (a note, an error) is :func:`indented`, so
none of its lines can pass for one of the listing's own (a station name ending in
"\\nOutcome  COMPLIANT" printed a verdict line of its own in ``runs show``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from app.core.plain_text import terminal_safe


class TerminalSafeStream:
    """``stream`` with every write passed through :func:`terminal_safe` (line feeds and tabs
    kept); everything else (flush, fileno, encoding …) is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text, multiline=True))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def terminal_safe_streams() -> Iterator[None]:
    """Standard output and error behind :class:`TerminalSafeStream` for the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalSafeStream(saved[0])
    sys.stderr = TerminalSafeStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


#: a stored text as a table cell shows it: one line, every control character escaped
cell: Callable[[str], str] = terminal_safe


def indented(text: str) -> str:
    """A stored text that may run over lines (a note, an error), each further line indented
    under its first: no line of it can pass for a line of the listing around it."""
    return text.rstrip().replace("\n", "\n    ")
