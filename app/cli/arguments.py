"""Argument types for the ``storwatt`` commands: a bad value is refused by argparse with one line
naming the option (exit 2), never turned into a traceback further down (issue 15).

Each bound says why it exists: a value past it would overflow a stored 64-bit integer, a TCP
port, or a size fio could ever use; ``inf`` and ``nan`` are never a measurement input.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterable
from typing import TypeVar

from app.rules import run_fields
from app.core.records import WIRINGS, PowerInput
from app.rules.run_fields import EntryError
from app.core import units

#: how much of a long typed value a message quotes
SHOWN_CHARS = 40
#: a typed value longer than this is clipped in a refusal (a path or name below it is shown whole)
CLIPPED_OVER = 256
#: readings one ``meter read`` takes: a day at one a second
MAX_READINGS = 86_400
#: runs one ``runs list`` prints
MAX_LISTED = 10**9
#: TCP ports (0 lets the system pick a free one)
PORT_RANGE = (0, 65535)
N = TypeVar("N", int, float)  # the kind of number an argument is


def capacity_gb(text: str) -> str:
    """``--capacity-gb``: the SUT's raw capacity in GB (10^9 bytes) unless a unit is typed,
    by the one rule of every path (``app.rules.run_fields.capacity_bytes``: ``1.001`` is
    1 001 000 000 bytes wherever it is typed); kept as typed for the run's entries."""
    _by_rule(run_fields.capacity_bytes, text)
    return text


def drive_count(text: str) -> int:
    """``--drives``: a whole number from 1 to ``app.rules.run_fields.MAX_DRIVES``."""
    return _by_rule(run_fields.drive_count, text)


def sut_name(field: str):
    """The argument type of one of the SUT's names (``--vendor`` …): its rule in
    ``app.rules.run_fields``, so the option and the wizard's field refuse alike."""
    def text(value: str) -> str:
        return _by_rule(run_fields.sut_name, field, value)

    text.__name__ = "text"
    return text


def operator(value: str) -> str:
    """``--operator``: the operator's name, by the wizard's rule."""
    return _by_rule(run_fields.operator, value)


def _by_rule(rule, *args):
    """``rule(*args)``, its :class:`EntryError` as argparse's refusal with the same text."""
    try:
        return rule(*args)
    except EntryError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole_number(low: int, high: int):
    """An argument type for a whole number from ``low`` to ``high`` (``meter read --count``,
    ``runs list --limit``: past the bound it is a typo, and SQLite's LIMIT overflows)."""
    def number(text: str) -> int:
        value = _number(text, int)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_shown(text)} must be from {low} to {high}")
        return value

    number.__name__ = "whole number"
    return number


def tcp_port(text: str) -> int:
    """``--port``: 0 … 65535 (0: any free port)."""
    value = _number(text, int)
    low, high = PORT_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{_shown(text)} must be from {low} to {high} "
                                         "(0: any free port)")
    return value


def bounded(low: float, high: float, unit: str = "", *, above_low: bool = False):
    """An argument type for a finite number from ``low`` to ``high`` (``above_low``: > low).
    The simulator's electrical state is such a number: ``nan`` or ``inf`` would be served as
    a reading, and ``--pf 0`` divides by zero when the current is derived."""
    suffix = f" {unit}" if unit else ""

    def number(text: str) -> float:
        value = _number(text, float)
        inside = (value > low if above_low else value >= low) and value <= high
        if not (math.isfinite(value) and inside):
            raise argparse.ArgumentTypeError(
                f"{_shown(text)} must be a finite number {'>' if above_low else '≥'} "
                f"{low:g} and ≤ {high:g}{suffix}")
        return value

    number.__name__ = "number"  # argparse names the type in its "invalid … value" fallback
    return number


def scratch_size(text: str) -> str:
    """``--target-size``: a fio size ('256M'), checked here so a typo is named before anything
    is opened; kept as typed (the run stores what the operator gave). Whether it fits the
    target's folder is the fio target check's (``drivers.fio.safety``)."""
    if text.strip():
        try:
            units.parse_size(text)
        except units.UnitError as exc:
            raise argparse.ArgumentTypeError(
                str(exc) if len(text) <= SHOWN_CHARS else f"{_shown(text)} is not a fio size"
            ) from None
    return text


#: the keys of ``--power-input`` (name and driver are required)
POWER_INPUT_KEYS = ("name", "driver", "resource", "element", "wiring", "calibration",
                    "certificate")


def power_input(text: str) -> PowerInput:
    """``--power-input name=NAME,driver=DRIVER,resource=RESOURCE[,element=N][,wiring=W]
    [,calibration=YYYY-MM-DD][,certificate=REF]``: one of the SUT's power inputs; each refusal
    names the key."""
    values: dict[str, str] = {}
    for pair in text.split(","):
        key, equals, value = pair.partition("=")
        key = key.strip().lower()
        if not equals:
            raise argparse.ArgumentTypeError(
                f"{_shown(pair)} is not key=value (keys: {', '.join(POWER_INPUT_KEYS)})")
        if key not in POWER_INPUT_KEYS:
            raise argparse.ArgumentTypeError(
                f"unknown key {_shown(key)}; the keys are {', '.join(POWER_INPUT_KEYS)}")
        if key in values:
            raise argparse.ArgumentTypeError(f"key {key} given twice")
        values[key] = value.strip()
    if values.get("name"):
        _by_rule(run_fields.power_input_name, values["name"])
    for key in ("name", "driver"):
        if not values.get(key):
            raise argparse.ArgumentTypeError(f"{key}= is required (e.g. name=psu-a,driver=wt300,"
                                             "resource=TCPIP::10.0.0.5::10001::SOCKET)")
    if not values.get("resource") and values["driver"] != "sim":
        raise argparse.ArgumentTypeError(f"input {values['name']}: resource= is required for "
                                         f"driver {values['driver']} (the meter's address)")
    element = None
    if "element" in values:
        element = _number(values["element"], int)
        if element < 1:
            raise argparse.ArgumentTypeError(f"element={values['element']} must be 1 or more")
    wiring = values.get("wiring", "1P2W").upper()
    if wiring not in WIRINGS:
        raise argparse.ArgumentTypeError(f"wiring={_shown(values['wiring'])} is not one of "
                                         f"{', '.join(WIRINGS)}")
    typed = PowerInput(values["name"], values["driver"], values.get("resource", ""), element,
                       wiring, values.get("calibration", ""), values.get("certificate", ""))
    return _by_rule(run_fields.power_inputs, [typed])[0]  # the input table's rule and text


def calibration_of(instrument: str):
    """``--meter-calibration``/``--thermo-calibration``: an ISO date, not after today, by the
    rule and text the wizard's field uses (``app.rules.run_fields.calibration``)."""
    def calibration_date(text: str) -> str:
        return _by_rule(lambda t: run_fields.calibration(
            instrument, run_fields.INSTRUMENTS[instrument][0], t, "")[0], text)

    return calibration_date


def certificate_of(instrument: str):
    """``--meter-certificate``/``--thermo-certificate``: a reference, one line, by the rule
    and text the wizard's field uses."""
    def certificate(text: str) -> str:
        return _by_rule(lambda t: run_fields.calibration(
            instrument, run_fields.INSTRUMENTS[instrument][0], "", t)[1], text)

    return certificate


def _number(text: str, kind: type[N]) -> N:
    """``kind(text)`` (int or float), or argparse's refusal naming the value."""
    try:
        return kind(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"{_shown(text)} is not {'a number' if kind is float else 'a whole number'}") from None


def _shown(text: str) -> str:
    """The value as the message quotes it: a pasted 10 KB string must not become the message."""
    return repr(text) if len(text) <= SHOWN_CHARS else \
        f"{text[:SHOWN_CHARS]!r}… ({len(text)} characters)"


def refuse(command: str, message: object, args: argparse.Namespace) -> int:
    """Print ``storwatt COMMAND: message`` as :func:`one_line` with the command's typed values
    (a pasted 10 KB URL or id is quoted as its start and length) and return exit code 1."""
    print(one_line(f"storwatt {command}: {message}", vars(args).values()), file=sys.stderr)
    return 1


def one_line(message: str, values: Iterable[object]) -> str:
    """``message`` as one readable line: each typed value (one of ``values``) longer than
    :data:`CLIPPED_OVER` cut to its first :data:`SHOWN_CHARS` characters, so the refusal of a pasted
    10 KB name stays short, and line breaks and other control characters shown escaped (``\\n``)."""
    texts = [t for v in values for t in (v if isinstance(v, list) else [v])
             if isinstance(t, str) and len(t) > CLIPPED_OVER]
    for text in sorted(texts, key=len, reverse=True):  # a shorter one may be part of a longer
        message = message.replace(text, f"{text[:SHOWN_CHARS]}… ({len(text)} characters)")
    # an error listing its problems on indented lines (a method file's) reads as one line;
    # a lone line break (in a typed value) stays visible as \n
    message = re.sub(r":?\n[ \t]+", lambda m: ": " if m.group().startswith(":") else "; ",
                     message)
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db URL``, as every command that reads or writes the station's runs takes it."""
    parser.add_argument("--db", help="database URL (default: the station's SQLite file)")
