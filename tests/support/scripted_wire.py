"""An instrument's wire as a script, in the style of pymeasure's ``expected_protocol``: each
command the driver must send, in order, and the reply the instrument gives (None: no reply).

The driver under test talks to a :class:`ScriptedTransport` instead of a socket; a command out
of order, a command the script does not expect, or a script left unfinished fails the test with
both sides named — so each protocol test pins every byte a driver sends, in process."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from drivers.meters.base import Instrument

Exchange = tuple[str, str | None]
D = TypeVar("D", bound=Instrument)


class ScriptedTransport:
    def __init__(self, resource: str, script: Sequence[Exchange]) -> None:
        self.resource = resource
        self.script = list(script)
        self.step = 0
        self.pending: str | None = None
        self.closed = False

    def write(self, line: str) -> None:
        assert self.step < len(self.script), f"unexpected command {line!r} after the script"
        expected, reply = self.script[self.step]
        assert line == expected, f"step {self.step}: sent {line!r}, expected {expected!r}"
        self.step += 1
        self.pending = reply

    def read(self) -> str:
        assert self.pending is not None, "read with no reply due"
        reply, self.pending = self.pending, None
        return reply

    def close(self) -> None:
        self.closed = True

    def unfinished(self) -> list[Exchange]:
        return self.script[self.step:]


@contextmanager
def expected_protocol(driver: D, script: Sequence[Exchange]) -> Iterator[D]:
    """``driver`` wired to ``script``; the whole script must have been sent on exit."""
    transport = ScriptedTransport(driver.resource, script)
    driver._connect = lambda: transport  # type: ignore[method-assign]  # the wire under test
    yield driver
    assert transport.unfinished() == [], "the driver did not send the whole script"
