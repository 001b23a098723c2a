"""One rule per field of a run's configuration, with its one refusal text (issue 24).

The command line, the wizard, a repeated set-up and ``--resume`` build a run configuration
through :mod:`app.station.run_entries`; every field it checks is checked here, so ``--capacity-gb
1.001`` and "1.001 GB" in the wizard are the same bytes, and a refusal reads the same in both
(the command line prefixes the option: ``argument --vendor: …``). Light on purpose: the
command line's argument types import it at start-up.

Each bound says why it exists: the stored column's length (app/storage/schema.py), a 64-bit
integer, or a typo no real SUT can be.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import replace

from app.core import plain_text, units
from app.core.calibration import CalibrationEntryError, checked_certificate, checked_date
from app.core.records import WIRINGS, PowerInput
from app.sequencer.capacity_optimisation import check_raid

#: the stored lengths of what an operator types: refused past them where they are typed, so a
#: run never stores on SQLite and fails on PostgreSQL
MAX_NAME_CHARS = 200
MAX_INPUT_NAME_CHARS = 100
#: a SUT's notes (the SUT file's bound)
MAX_NOTES_CHARS = 4000
#: an SUT's drive count: past a million it is a typo (and stays a storable integer)
MAX_DRIVES = 1_000_000
#: a SUT raw capacity above 1 EB (10^9 GB) is a typo; it also keeps bytes inside int64
MAX_CAPACITY_BYTES = 10**18
#: decimal units, method-notes §4: 1 GB = 10⁹ B (never GiB in a capacity figure)
CAPACITY_UNITS = {"GB": 10**9, "TB": 10**12}
DRIVE_TYPES = ("HDD", "SSD")
#: how much of a long typed value a message quotes
SHOWN_CHARS = 40
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:]+\](:\d{1,5})?$")
#: the SUT's identity fields: (field, what the message calls it, required)
SUT_NAMES = (("vendor", "the SUT's vendor", True), ("model", "the SUT's model", True),
             ("serial", "the SUT's serial number", True),
             ("firmware", "the SUT's firmware", False))


#: a refusal quotes what was typed; a pasted 10 KB value is shown as its start and length
LONG_WORD = re.compile(r"[^\s'\"]{81,}")
MAX_MESSAGE = 600


def _clipped(message: str) -> str:
    message = LONG_WORD.sub(lambda m: f"{m.group()[:40]}… ({len(m.group())} characters)",
                            message)
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 1] + "…"


class EntryError(ValueError):
    """An entry the station cannot accept; ``field`` names the entry to fix (the wizard
    focuses its widget, the command line names its option). ``str()`` is the whole text
    (the command line clips typed values its own way); ``message`` is it as a form shows
    it, a pasted 10 KB value cut to its start and length."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = _clipped(message)


def shown(text: str) -> str:
    """A typed value as a message quotes it: a pasted 10 KB string must not become the
    message."""
    return repr(text) if len(text) <= SHOWN_CHARS else \
        f"{text[:SHOWN_CHARS]!r}… ({len(text)} characters)"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def one_line_text(field: str, what: str, value: str, limit: int = MAX_NAME_CHARS,
                  required: bool = False) -> str:
    """A one-line entry (a SUT's vendor, the operator's name …), trimmed; refused empty when
    ``required`` and past ``limit`` characters (the column that stores it)."""
    value = plain(field, what, value.strip())
    if required and not value:
        raise EntryError(field, f"Enter {what}: it identifies the unit in the report.")
    if len(value) > limit:
        raise EntryError(field, f"{shown(value)} is longer than {limit} characters, the most "
                         f"{what} can hold.")
    return value


def plain(field: str, what: str, value: str, multiline: bool = False) -> str:
    """``value`` unless it holds terminal or layout control (``app.core.plain_text``: the one
    rule of every typed text, issue 40); the refusal names the field and the characters."""
    why = plain_text.refusal(value, _capital(what), multiline)
    if why is not None:
        raise EntryError(field, f"{why}.")
    return value


def sut_name(field: str, value: str) -> str:
    """One of :data:`SUT_NAMES` by its rule."""
    _, what, required = next(n for n in SUT_NAMES if n[0] == field)
    return one_line_text(field, what, value, required=required)


def operator(value: str) -> str:
    return one_line_text("operator", "the operator's name", value)


def notes(value: str) -> str:
    value = plain("notes", "the SUT's notes", value.strip(), multiline=True)
    if len(value) > MAX_NOTES_CHARS:
        raise EntryError("notes", f"The SUT's notes are {len(value)} characters; at most "
                         f"{MAX_NOTES_CHARS}.")
    return value


def capacity_bytes(text: str, unit: str = "GB", decimal_point: str = ".") -> int:
    """A raw capacity as typed ("7.3", "7300 GB", "7,3 TB", "1e3") in bytes, rounded to the
    byte once (``app.core.units``); ``unit`` applies when none is typed. Refused: empty, not a
    number, not finite, not above zero, above 1 EB."""
    if unit not in CAPACITY_UNITS:
        raise EntryError("capacity_unit", f"Unknown capacity unit {unit!r}; use GB or TB.")
    if not text.strip():
        raise EntryError("capacity", "Enter the SUT's raw capacity (e.g. 7300 GB).")
    try:
        raw = units.parse_capacity(text, unit, decimal_point)
    except units.UnitError as exc:
        try:  # a plain number units does not spell ("1e3", "inf", "-1")
            value = float(text)
        except ValueError:
            raise EntryError("capacity", f"Raw capacity: {exc}.") from None
        scaled = value * CAPACITY_UNITS[unit]  # a finite value × its unit may overflow
        raw = round(scaled) if math.isfinite(scaled) else -1
    if not 0 < raw <= MAX_CAPACITY_BYTES:
        raise EntryError("capacity", f"{shown(text.strip())} must be a finite number of GB > 0 "
                         "and ≤ 1e+09 (a raw capacity greater than zero and at most 1 EB).")
    return raw


def drive_count(value: int | str) -> int:
    """A whole number of drives from 1 to :data:`MAX_DRIVES`."""
    try:
        count = int(value)
    except (ValueError, OverflowError):
        raise EntryError("drive_count", f"The SUT's drive count {shown(str(value))} is not a "
                         "whole number.") from None
    if not 1 <= count <= MAX_DRIVES:
        raise EntryError("drive_count", f"The SUT's drive count must be from 1 to "
                         f"{MAX_DRIVES} (got {shown(str(value))}).")
    return count


#: the classification answer that is the product's maximum configuration (method-notes §1)
MAX_CONFIG_ANSWER = "max_drive_count"


def drives_within_max_config(drives: int, answers: dict) -> None:
    """The SUT's drives against the maximum configuration answered for its classification:
    the most drives the product supports cannot be fewer than the drives under test, so one
    of the two is a typo (and the classification derived from it is wrong). Nothing to check
    when the maximum configuration was not answered."""
    most = answers.get(MAX_CONFIG_ANSWER)
    if most is None or isinstance(most, bool) or not isinstance(most, int) or drives <= most:
        return
    raise EntryError("drive_count", f"The SUT's drive count {drives} is more than its maximum "
                     f"configuration of {most} drives (a classification answer): the product "
                     "cannot hold more drives than it supports; correct the drive count or "
                     "the maximum configuration.")


def default_max_config(drives: int | str) -> int | None:
    """The maximum configuration when it is not answered: the SUT's drive count, the fewest
    the product can support (the smallest answer consistent with the SUT, so the derived
    level is never raised by a default). None when the drive count does not read (its own
    rule refuses it)."""
    try:
        return drive_count(drives)
    except EntryError:
        return None


def drive_type(value: str) -> str:
    """HDD or SSD; "" when not declared (the command line's ``--drive-type`` is optional)."""
    if value and value not in DRIVE_TYPES:
        raise EntryError("drive_type", f"Drive type must be one of {', '.join(DRIVE_TYPES)}.")
    return value


def raid(value: str) -> str:
    plain("raid", "the SUT's RAID level", value)
    try:
        check_raid(value)
    except ValueError as exc:
        raise EntryError("raid", f"{exc}.") from None
    return value.strip()


def load_hosts(hosts: Iterable[str]) -> tuple[str, ...]:
    """``host[:port]`` lines, blanks dropped."""
    given = tuple(h.strip() for h in hosts if h.strip())
    bad = [h for h in given if not _HOST.match(h)]
    if bad:
        raise EntryError("load_hosts", f"Not a host[:port]: {', '.join(bad)}")
    return given


def calibration(prefix: str, what: str, when: str, certificate: str) -> tuple[str, str]:
    """A calibration date and certificate by the one rule (app.core.calibration), the refusal
    naming the entry to fix (``meter_calibration`` …)."""
    try:
        date_text = checked_date(when, what)
    except CalibrationEntryError as exc:
        raise EntryError(f"{prefix}_calibration", f"{_capital(str(exc))}.") from None
    try:
        return date_text, checked_certificate(certificate, what)
    except CalibrationEntryError as exc:
        raise EntryError(f"{prefix}_certificate", f"{_capital(str(exc))}.") from None


#: what each instrument is called in a message, and how its address is asked for
INSTRUMENTS = {"meter": ("the power meter's", "Enter the power meter's address (VISA "
                         "resource, e.g. TCPIP::127.0.0.1::10001::SOCKET)."),
               "thermo": ("the thermometer's", "Enter the thermometer's address (VISA "
                          "resource or host:port).")}
#: thermometer drivers that need no address
NO_ADDRESS = ("sim", "none")


def instrument(prefix: str, driver: str, resource: str, when: str,
               certificate: str) -> tuple[str, str, str]:
    """(address, calibration date, certificate) of the power meter (``prefix`` "meter") or
    the thermometer ("thermo"); a real instrument needs its address."""
    what, ask = INSTRUMENTS[prefix]
    if driver not in NO_ADDRESS and not resource.strip():
        raise EntryError(f"{prefix}_resource", ask)
    plain(f"{prefix}_resource", f"{what} address", resource.strip())
    return (resource.strip(), *calibration(prefix, what, when, certificate))


def power_input_name(name: str, row: int | None = None) -> str:
    where = f"Power input row {row}" if row is not None else "Power input"
    if not name.strip():
        raise EntryError("power_inputs", f"{where}: enter a name (e.g. psu-a).")
    if len(name) > MAX_INPUT_NAME_CHARS:
        raise EntryError("power_inputs", f"{where}: the name {shown(name)} is longer than "
                         f"{MAX_INPUT_NAME_CHARS} characters.")
    return plain("power_inputs", f"{where}: the name", name)


def power_inputs(inputs: Iterable[PowerInput]) -> tuple[PowerInput, ...]:
    """The SUT's power inputs: each named once, each real meter with its address, a known
    wiring, its calibration by the one rule."""
    seen: set[str] = set()
    checked = []
    for row, i in enumerate(inputs, start=1):
        power_input_name(i.name, row)
        if i.name in seen:
            raise EntryError("power_inputs", f"Power input {i.name!r} is listed twice: each "
                             "input needs its own name.")
        seen.add(i.name)
        if i.driver != "sim" and not i.resource.strip():
            raise EntryError("power_inputs", f"Power input {i.name}: enter the meter's address "
                             "(VISA resource or host:port).")
        plain("power_inputs", f"Power input {i.name}: the meter's address", i.resource.strip())
        if i.wiring not in WIRINGS:
            raise EntryError("power_inputs", f"Power input {i.name}: wiring {i.wiring!r} is not "
                             f"one of {', '.join(WIRINGS)}.")
        try:
            when = checked_date(i.calibration_date, f"power input {i.name}'s")
            reference = checked_certificate(i.certificate, f"power input {i.name}'s")
        except CalibrationEntryError as exc:
            raise EntryError("power_inputs", f"{_capital(str(exc))}.") from None
        checked.append(replace(i, resource=i.resource.strip(), calibration_date=when,
                               certificate=reference))
    return tuple(checked)
