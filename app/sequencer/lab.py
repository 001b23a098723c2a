"""The instruments and workload engine a run uses, bundled for the sequencer.

A ``Lab`` is what the sequencer talks to; how it was built (simulated meters on loopback
sockets, real analyzers over VISA, fio or the simulated SUT) is the builder's business
(``app.labs``). Closing a lab closes every instrument and simulator it started.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from drivers.interfaces import PowerMeter, TemperatureMeter, WorkloadEngine


@dataclass
class Lab:
    power_meter: PowerMeter
    engine: WorkloadEngine
    temperature_meter: TemperatureMeter | None = None
    #: (logical, physical) bytes used on the SUT, for COM heuristics; None = not observable
    capacity_probe: Callable[[], tuple[int, int]] | None = None
    #: how long after an interval's end the engine's figures for it arrive (fio: ~1 s)
    workload_latency_s: float = 0.0
    description: str = ""
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Close instruments and stop simulators, newest first; never raises."""
        for closer in reversed(self.closers):
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing must go on for the rest
                pass
        self.closers.clear()
