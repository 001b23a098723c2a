"""A load host's live rates from its fio client's ETA lines, as they arrive (docs/fio.md,
"What fio's client prints while a job runs").

The station runs one client per host with ``--output-format=normal --eta=always
--eta-newline=1``: fio then prints ``Jobs: 1 (f=1): […][r=2805k,w=1202k][r=701,w=300 IOPS]
[eta 00m:01s]`` about once a second (``\\r``-terminated, a ``\\n`` added by
``--eta-newline``). :class:`EtaFeed` is the client process's ``on_text`` callback: it runs on
the reader thread, splits the chunks into lines (a line may span two reads), parses each
with ``drivers/fio/eta.py`` and queues a :class:`HostRate` per line that shows IO. It also
keeps the whole text: the normal report at the end is read from it
(``drivers/fio/normal_report.py``).
"""

from __future__ import annotations

import queue
import re

from drivers.fio.eta import EtaFormatError, parse_eta_line
from drivers.interfaces import HostRate

_LINE_END = re.compile(r"[\r\n]")


class EtaFeed:
    """Turns one host client's stdout into :class:`HostRate` records (thread-safe queue)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._partial = ""
        self._chunks: list[str] = []
        self._rates: queue.Queue[HostRate] = queue.Queue()
        self.last_t = 0.0  # when the last text arrived: the report's arrival once it exited
        self.last_io_t = 0.0  # when the last line showing IO arrived

    def __call__(self, t: float, chunk: str) -> None:
        self._chunks.append(chunk)
        self.last_t = t
        *lines, self._partial = _LINE_END.split(self._partial + chunk)
        for line in lines:
            try:
                status = parse_eta_line(line)
            except EtaFormatError:  # not shown; the counted figures never come from here
                continue
            if status is not None and status.iops > 0:
                self.last_io_t = t
                self._rates.put(HostRate(self.host, t, status.read_iops, status.write_iops,
                                         status.read_kib_s, status.write_kib_s))

    def take(self) -> list[HostRate]:
        """The rates queued since the last call, oldest first."""
        out = []
        while True:
            try:
                out.append(self._rates.get_nowait())
            except queue.Empty:
                return out

    @property
    def text(self) -> str:
        """Everything the client printed so far (its normal report once it exited)."""
        return "".join(self._chunks)
