"""docs/troubleshooting.md is keyed to the exact words a user sees (issue 41): an entry whose
message the station no longer prints would send the user looking for a line that never comes,
so every quoted message must still be in the code that prints it.

Each entry's heading quotes the message in backticks; ``…`` stands for what varies (a name, a
number) or where the code breaks the literal across lines. Every piece between the ellipses
must occur literally in the station's sources (app, ui, drivers, verifier)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "troubleshooting.md"
SOURCES = ("app", "ui", "drivers", "verifier")
#: a heading that quotes a message: ### `…`
QUOTED = re.compile(r"^### `([^`]+)`\s*$", re.M)
#: shorter pieces ("a", "of") would be found anywhere and prove nothing
SHORTEST_PIECE = 6


def source_text(root: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for folder in SOURCES
                     for path in sorted((root / folder).rglob("*.py")))


def missing_messages(guide: str, sources: str) -> list[str]:
    """The quoted messages with a piece that no source holds."""
    missing = []
    for message in QUOTED.findall(guide):
        pieces = [p.strip() for p in message.split("…")]
        if not any(len(p) >= SHORTEST_PIECE for p in pieces):
            missing.append(f"{message}: no piece long enough to find")
        elif any(len(p) >= SHORTEST_PIECE and p not in sources for p in pieces):
            missing.append(message)
    return missing


def test_every_quoted_message_is_still_printed() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert len(QUOTED.findall(guide)) >= 15  # the guide's entries are found at all
    assert missing_messages(guide, source_text(ROOT)) == []


def test_the_check_sees_a_reworded_message() -> None:
    sources = 'raise X(f"{where} refused the connection: nothing listens "\n"on that port")'
    guide = ("### `refused the connection: nothing listens …`\n"
             "### `… no longer listens …`\n### `… ab …`\n")
    assert missing_messages(guide, sources) == [
        "… no longer listens …", "… ab …: no piece long enough to find"]


def test_every_entry_says_cause_and_fix() -> None:
    entries = re.split(r"^### ", GUIDE.read_text(encoding="utf-8"), flags=re.M)[1:]
    assert [e.splitlines()[0] for e in entries
            if "**Cause:**" not in e or "**Fix:**" not in e] == []
