"""A small declarative command layer: meter settings and readings as class-level data.

A driver class lists what its instrument understands (command text, unit, validator) instead
of hand-writing one method per command, so a protocol table in the manual maps one-to-one to
the class body and the protocol tests can check the exact bytes per entry.

``Control`` is a setting: assigning validates the value and sends the set command; reading
the attribute sends the query and parses the reply. ``Reading`` is a measurement query whose
reply has named, separated fields. Both talk through the owner's ``_write``/``_query``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drivers.interfaces import InstrumentError
from drivers.meters.values import parse_range

Validator = Callable[[Any, Any], Any]


def in_list(attribute: str, unit: str) -> Validator:
    """Value must be one of ``meter.<attribute>`` (e.g. the model's range list)."""

    def check(value: Any, meter: Any) -> float:
        allowed = getattr(meter, attribute)
        number = float(value)
        for candidate in allowed:
            if math.isclose(candidate, number, rel_tol=1e-6):
                return candidate
        listed = ", ".join(f"{a:g}" for a in allowed)
        raise InstrumentError(f"{number:g} {unit} is not a range of the {meter.DRIVER} "
                              f"driver; choose one of {listed} {unit}")

    return check


def on_off(value: Any, meter: Any) -> str:
    return "ON" if value else "OFF"


def parse_value(reply: str) -> float:
    """A numeric reply (a range may carry its V or A); garbage is an error, not a number."""
    number = parse_range(reply.strip().split(",")[-1])
    if number is None:
        raise InstrumentError(f"unexpected reply {reply!r}: expected a number")
    return number


class Control:
    """A settable (and optionally queryable) instrument setting."""

    def __init__(self, set_cmd: str, get_cmd: str | None = None, *, unit: str = "",
                 validator: Validator | None = None, parse: Callable[[str], Any] = parse_value,
                 ack: bool = False, doc: str = "") -> None:
        self.set_cmd = set_cmd
        self.get_cmd = get_cmd
        self.unit = unit
        self.validator = validator
        self.parse = parse
        self.ack = ack  # the instrument answers every set command (PTDaemon)
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, meter: Any, owner: type | None = None) -> Any:
        if meter is None:
            return self
        if self.get_cmd is None:
            raise AttributeError(f"{self.name} cannot be queried on {meter.DRIVER}")
        return self.parse(meter._query(self.get_cmd))

    def __set__(self, meter: Any, value: Any) -> None:
        if self.validator is not None:
            value = self.validator(value, meter)
        command = self.set_cmd.format(value=value, **meter.command_fields())
        if self.ack:
            meter._check_ack(command, meter._query(command))
        else:
            meter._write(command)


@dataclass(frozen=True)
class Reading:
    """A measurement query whose reply carries ``fields`` in order, split by ``separator``."""

    query: str
    fields: tuple[str, ...]
    separator: str = ","

    def command(self, meter: Any) -> str:
        return self.query.format(**meter.command_fields())
