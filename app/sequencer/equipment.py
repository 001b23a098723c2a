"""The instruments and workload engine a run uses, bundled for the sequencer.

A ``Lab`` is what the sequencer talks to; how it was built (simulated meters on loopback
sockets, real analyzers over VISA, fio or the simulated SUT) is the builder's business
(``app.labs.builder.build_lab``). Each piece's tear-down is registered in the lab's
:class:`Teardown`
the moment that piece is set up (the idea of OpenHTF's plugs), so closing the lab, or a
builder that fails half way, undoes exactly what was done, newest first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType

from app.sequencer.power_inputs import InputIdentity, PowerInputs
from app.sequencer.range_plan import MAIN_INPUT
from app.sequencer.failures import failure_reason
from drivers.interfaces import (DataSetMeasure, HostClock, PowerMeter, TemperatureMeter,
                                WorkloadEngine)


_log = logging.getLogger(__name__)


class LabError(ValueError):
    """The lab cannot be built from this configuration (message says what to fix)."""


@dataclass(frozen=True)
class TeardownFailure:
    """A tear-down step that raised: which piece of the lab, and the error."""

    component: str
    error: str


class Teardown:
    """Tear-down steps of a lab's pieces, run newest first, each at most once.

    Newest first because a piece may depend on one set up before it (a driver on the loopback
    simulator it talks to). Used as a context manager by a builder: leaving the block with an
    exception tears down what was already set up, then lets the exception go on.
    """

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], None]]] = []

    def register(self, step: Callable[[], None], component: str) -> None:
        """``component`` names the piece in words a technician knows ("power meter")."""
        self._steps.append((component, step))

    def run(self) -> tuple[TeardownFailure, ...]:
        """Run every registered step, newest first, and return the ones that failed; never
        raises: one failing step must not leave the pieces set up before it running. Each
        failure is also logged, for a tear-down outside a run (a builder failing half way);
        in a run the sequencer publishes it (``TeardownFailed``)."""
        failures = []
        while self._steps:
            component, step = self._steps.pop()
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - reported; the rest must still close
                failure = TeardownFailure(component, failure_reason(exc))
                _log.error("tearing down the %s failed: %s", component, failure.error)
                failures.append(failure)
        return tuple(failures)

    def __enter__(self) -> Teardown:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None:
            self.run()


@dataclass(frozen=True)
class Lab:
    """One run's instruments, decided once: the builder sets them, nothing replaces them."""

    power_meter: PowerMeter
    engine: WorkloadEngine
    temperature_meter: TemperatureMeter | None = None
    #: (logical, physical) bytes used on the SUT, for COM heuristics; None = not observable
    capacity_probe: Callable[[], tuple[int, int]] | None = None
    #: how long after an interval's end the engine's figures for it arrive (fio: ~1 s)
    workload_latency_s: float = 0.0
    description: str = ""
    teardown: Teardown = field(default_factory=Teardown)
    #: measures a COM data set where it was written: (written bytes, block size) → one
    #: ``DataSetMeasure`` per target; None = the data is out of the station's reach
    data_set_probe: Callable[[int, int], tuple[DataSetMeasure, ...]] | None = None
    #: measures each load host's clock against the station's at the start; None = no hosts
    host_clocks: Callable[[], Sequence[HostClock]] | None = None
    #: the reader of the SUT's power inputs when it has several (then also ``power_meter``)
    power_inputs: PowerInputs | None = None

    def input_identities(self) -> tuple[InputIdentity, ...]:
        """Who reads each power input (empty with one meter); known once opened."""
        return self.power_inputs.identities if self.power_inputs else ()

    def ranged_meters(self) -> dict[str, PowerMeter]:
        """The meter of each power input by name (``MAIN_INPUT`` for the one meter): what the
        ranging pass ranges, each on its own readings. The two never share a lab, so an input
        may be named "main" (``Ranger.several_inputs`` tells them apart, issue 24)."""
        if self.power_inputs is None:
            return {MAIN_INPUT: self.power_meter}
        return {config.name: meter for config, meter in self.power_inputs.inputs}

    def input_notes(self) -> list[str]:
        """What happened to single inputs since the last call (an input that missed a
        reading), for the run log."""
        return self.power_inputs.take_notes() if self.power_inputs else []

    def close(self) -> tuple[TeardownFailure, ...]:
        """Close instruments and stop simulators, newest first; never raises, returns what
        failed to close (the session publishes it with the run)."""
        return self.teardown.run()
