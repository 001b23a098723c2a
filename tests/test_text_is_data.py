"""Text is data, never terminal control (issue 40 §3).

Seen on main: a SUT vendor ``Ev\\e]0;pwned-title\\a\\e[2J\\e[31mRED`` and a model carrying OSC 52
(write the clipboard) were accepted, and ``storwatt runs list`` printed them raw — the QA
engineer's screen cleared, the title set, the clipboard asked for; a NUL or a newline broke the
table row. Two guards, each tested here:

* at entry, one rule (``app.core.plain_text``) for every typed text: the command line, the
  wizard (both through ``app.rules.run_fields``), the SUT file, the station name, a method's
  title, a calibration certificate, audit notes and COM evidence;
* at output, whatever a database holds (other stations wrote it) reaches the terminal
  escaped: hostile rows are written straight into a database and ``runs list``, ``runs
  show``, ``family list``, ``db info`` and ``audit list`` must print no control byte, and
  ``runs list`` as many lines as for the same run with plain text (a metamorphic check).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli.main import main
from app.core import plain_text
from app.core.calibration import CalibrationEntryError, checked_certificate
from app.core.station_settings import StationNameError, check_name
from app.method.loader import MethodError, load_method_file
from app.rules import run_fields
from app.station.sut_file import SutFileError, load_sut_file
from app.storage.audit import AuditError, add_audit_entry
from app.storage.opening import open_database
from tests.support.stored_runs import store_synthetic_run
from tests.support.tamper import tamper

#: what the issue's attacker typed, and its relatives
HOSTILE = {
    "title-and-clear": "Ev\x1b]0;pwned-title\x07\x1b[2J\x1b[31mRED",
    "osc52-clipboard": "M\x1b]52;c;cHduZWQ=\x07odel",
    "nul": "a\x00b",
    "newline": "line one\nline two",
    "carriage-return": "shown\roverwritten",
    "c1-csi": "x\x9b2Jy",
    "delete": "x\x7fy",
    "bidi-override": "abc\u202edcba",
    "bidi-isolate": "\u2066x\u2069",
    "zero-width": "SN\u200b123",
    "bom": "\ufeffvendor",
    "word-joiner": "a\u2060b",
    "line-separator": "a\u2028b",
}


def _bad_codepoints(text: str) -> list[str]:
    """What must never reach a terminal: C0 but the line feed, DEL, C1, bidi controls and
    zero-width characters (a line feed inside a row is checked by the row count)."""
    return [f"U+{ord(c):04X}" for c in text
            if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
            or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069
            or ord(c) in (0x200b, 0x200c, 0x200d, 0xfeff, 0x2060, 0x2028, 0x2029)]


# --- at entry: one rule for every typed text ----------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_typed_one_line_field_refuses_control_text(name: str) -> None:
    text = HOSTILE[name]
    for field, _, _ in run_fields.SUT_NAMES:
        with pytest.raises(run_fields.EntryError, match="control, bidi or zero-width") as err:
            run_fields.sut_name(field, text)
        assert err.value.field == field
    for rule, args in ((run_fields.operator, ()), (run_fields.raid, ())):
        with pytest.raises(run_fields.EntryError, match="control, bidi or zero-width"):
            rule(text, *args)
    with pytest.raises(run_fields.EntryError, match="address cannot hold") as address:
        run_fields.instrument("meter", "wt300", f"TCPIP::{text}::SOCKET", "", "")
    assert address.value.field == "meter_resource"
    with pytest.raises(StationNameError, match="control, bidi or zero-width"):
        check_name(text)
    if plain_text.control_characters(" ".join(text.split())):  # it joins white space
        with pytest.raises(CalibrationEntryError, match="control, bidi or zero-width"):
            checked_certificate(text)


@pytest.mark.parametrize("name", sorted(set(HOSTILE) - {"newline"}))
def test_notes_keep_line_breaks_and_refuse_the_rest(name: str) -> None:
    assert run_fields.notes("first line\n\tsecond line") == "first line\n\tsecond line"
    with pytest.raises(run_fields.EntryError, match="control, bidi or zero-width"):
        run_fields.notes(HOSTILE[name])


def test_the_refusal_names_the_characters_in_one_line() -> None:
    with pytest.raises(run_fields.EntryError) as err:
        run_fields.sut_name("vendor", HOSTILE["title-and-clear"])
    assert "U+001B" in str(err.value) and "U+0007" in str(err.value)
    assert "\x1b" not in str(err.value) and "\n" not in str(err.value)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
@settings(max_examples=300, deadline=None)
def test_the_rule_and_the_escape_agree_on_any_text(text: str) -> None:
    """Property: text the rule accepts is printed unchanged; any other text, escaped, holds no
    character the rule refuses, and the escape never loses a character that was text."""
    safe = plain_text.terminal_safe(text)
    if plain_text.refusal(text, "x") is None:
        assert safe == text
    else:
        assert plain_text.refusal(safe, "x") is None
    rest = iter(safe)  # every character that was text is still there, in order
    assert all(c in rest for c in text if not plain_text.is_control(c))


def test_the_fast_path_lets_no_refused_character_through() -> None:
    """``str.isprintable`` is the rule's fast path: over every code point, no character the
    rule refuses is printable (a Python whose Unicode tables changed would show it here)."""
    leaks = [f"U+{code:04X}" for code in range(sys.maxunicode + 1)
             if plain_text.is_control(chr(code)) and chr(code).isprintable()]
    assert leaks == []


def test_the_command_line_refuses_a_hostile_vendor(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:  # refused by the option's type, as --drives -3
        main(["run", "--method", "smoke", "--lab", "sim-direct", "--db",
              f"sqlite:///{tmp_path / 'r.db'}", "--vendor", HOSTILE["osc52-clipboard"]])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --vendor: The SUT's vendor cannot hold" in err
    assert not _bad_codepoints(err) and "Traceback" not in err, err
    assert not (tmp_path / "r.db").exists()


def test_a_sut_file_with_control_text_is_refused(tmp_path: Path) -> None:
    data = {"vendor": HOSTILE["title-and-clear"], "model": "M", "serial": "S",
            "raw_capacity": "7.3 TB", "drives": 2, "drive_type": "SSD", "raid": "RAID 1",
            "supply": "1P-200-240", "ashrae_class": "A2",
            "power_supplies": {"count": 1, "redundancy": "1+0", "nameplate_w": 500}}
    path = tmp_path / "sut.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SutFileError, match="vendor cannot hold"):
        load_sut_file(path)
    data["vendor"], data["notes"] = "Acme", "two\nlines"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_sut_file(path).notes == "two\nlines"


def test_a_method_title_with_control_text_is_refused(tmp_path: Path) -> None:
    base = Path(__file__).parents[1] / "resources" / "methods" / "emerald-block-v3.toml"
    text = base.read_text(encoding="utf-8")
    assert "\ntitle = " in text
    bad = tmp_path / "copy.toml"
    bad.write_text(text.replace("\ntitle = \"", "\ntitle = \"\\u001b[2J", 1), encoding="utf-8")
    with pytest.raises(MethodError, match="title.*control, bidi or zero-width"):
        load_method_file(bad)


def test_a_stored_note_cannot_forge_a_line_of_the_audit_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A note may run over lines; each further line is indented, so a note holding what looks
    like QA's acceptance (written by another station, or before the rule) forges no entry."""
    url = _stored(tmp_path / "notes.db", PLAIN_ROW)
    forged = "see below\n2026-01-01 00:00:00 UTC  disposition accepted by QA: fine"
    database = open_database(url)
    try:
        add_audit_entry(database, "hostile-run", "note", forged, "tech")
    finally:
        database.close()
    main(["audit", "list", "hostile-run", "--db", url])
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("2026-01-01") for line in lines), lines
    assert any(line.startswith("    2026-01-01") for line in lines), lines


def test_audit_text_and_com_evidence_refuse_control_text(tmp_path: Path) -> None:
    database = store_synthetic_run(f"sqlite:///{tmp_path / 'a.db'}", "audit-run-0001")
    try:
        with pytest.raises(AuditError, match="the note cannot hold"):
            add_audit_entry(database, "audit-run", "note", HOSTILE["osc52-clipboard"], "QA")
        with pytest.raises(AuditError, match="the author cannot hold"):
            add_audit_entry(database, "audit-run", "note", "fine", "Q\x1b[2JA")
        entry = add_audit_entry(database, "audit-run", "note", "two\nlines", "QA")
        assert entry.text == "two\nlines"
    finally:
        database.close()


# --- at output: stored text reaches the terminal escaped ---------------------------------


def _stored(path: Path, texts: dict[str, str]) -> str:
    """A stored synthetic run whose typed texts are then overwritten straight in the file,
    as another station (or an older version) could have written them."""
    url = f"sqlite:///{path}"
    store_synthetic_run(url, "hostile-run-0001").close()
    # the run is finished: its facts change only by deliberate work past the triggers
    tamper(path, ("UPDATE suts SET vendor = ?, model = ?, serial = ?",
                  (texts["vendor"], texts["model"], texts["serial"])),
           ("UPDATE stations SET name = ?", (texts["station"],)),
           ("UPDATE runs SET operator = ?, taxonomy = ?, method_version = ?, "
            "config = json_set(config, '$.station', ?, '$.operator', ?)",
            (texts["operator"], texts["taxonomy"], texts["version"],
             texts["station"], texts["operator"])))
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return url


HOSTILE_ROW = {"vendor": HOSTILE["title-and-clear"], "model": HOSTILE["osc52-clipboard"],
               "serial": HOSTILE["nul"] + HOSTILE["newline"], "station": HOSTILE["bidi-override"]
               + HOSTILE["c1-csi"] + "\nOutcome  COMPLIANT",
               "operator": HOSTILE["carriage-return"],
               "taxonomy": "online\n3" + HOSTILE["zero-width"], "version": "1\x1b[8m"}
PLAIN_ROW = {key: "plain" for key in HOSTILE_ROW}

COMMANDS = (["runs", "list"], ["runs", "show", "hostile-run"], ["family", "list"],
            ["db", "info"], ["audit", "list", "hostile-run"])


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_no_command_prints_a_control_character_from_a_database(
        tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    url = _stored(tmp_path / "hostile.db", HOSTILE_ROW)
    main([*argv, "--db", url])
    out, err = capsys.readouterr()
    assert not _bad_codepoints(out), (_bad_codepoints(out), out)
    assert not _bad_codepoints(err), (_bad_codepoints(err), err)


@pytest.mark.parametrize("argv", (["runs", "list"], ["runs", "show", "hostile-run"]),
                         ids=" ".join)
def test_stored_text_never_makes_a_line_of_its_own(
        tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Metamorphic: the hostile database prints in as many lines as the same run with plain
    text (a station name ending in "\\nOutcome  COMPLIANT" prints no verdict line), and the
    escaped texts are still there to read."""
    main([*argv, "--db", _stored(tmp_path / "plain.db", PLAIN_ROW)])
    plain = capsys.readouterr().out
    main([*argv, "--db", _stored(tmp_path / "hostile.db", HOSTILE_ROW)])
    hostile = capsys.readouterr().out
    assert len(hostile.splitlines()) == len(plain.splitlines()), hostile
    assert "\\u202e" in hostile and "\\x0aOutcome  COMPLIANT" in hostile, hostile
    assert not any(line.startswith("Outcome  COMPLIANT") for line in hostile.splitlines())


@pytest.mark.gui
@pytest.mark.parametrize("field", ("vendor", "model", "serial", "operator", "notes"))
def test_the_wizard_refuses_control_text_by_the_same_rule(field: str, tmp_path: Path) -> None:
    """The wizard's pages check through ``app.rules.run_fields`` like the command line: the
    page holding the field refuses it, naming that field."""
    from PySide6.QtWidgets import QApplication

    from app.station.run_entries import EntryError, RunEntries
    from ui.wizard.profiles import SutProfileStore
    from ui.wizard.wizard import NewRunWizard

    _app = QApplication.instance() or QApplication([])
    typed = {"vendor": "Acme", "model": "A1", "serial": "S1", "capacity": "7.3",
             "operator": "R. Tester",
             field: HOSTILE["title-and-clear"]}
    wizard = NewRunWizard(entries=RunEntries(method="smoke", **typed),
                          simulated_lab="sim-direct",
                          store=SutProfileStore(tmp_path / "profiles.json"))
    try:
        entries = wizard.entries()
        refusals = []
        for page in wizard.pages[1:]:
            try:
                page.check(entries)
            except EntryError as exc:
                refusals.append(exc)
        # the instruments page also asks for a connection test the simulated lab has not had
        mine = [e for e in refusals if e.field != "test_connection"]
        assert mine and {e.field for e in mine} == {field}, [(e.field, e.message) for e in mine]
        assert all("control, bidi or zero-width" in e.message for e in mine)
    finally:
        wizard.deleteLater()
