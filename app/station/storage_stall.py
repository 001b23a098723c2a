"""A stalled data disk is announced while the run goes on (issue 40 §5).

A disk that stops completing writes (``fsfreeze``, a hung NFS or USB disk) raises no error: the
run writer's commit just never returns. Seen on main: frozen for 45 s, the station waited with
no word; killed during the freeze, ~80 samples it had measured were in memory only and were
lost, and nothing had said that writes had stopped. So the session watches the writer: once a
write has been under way longer than the stall limit, the run's log (console, run view, and the
stored record once the disk answers again) says so, with the samples held and where; when the
write completes, it says how long the stall lasted.

The limit is a station setting, not a method rule (it never changes a figure):
``STORWATT_COMMIT_STALL_S`` seconds, :data:`DEFAULT_COMMIT_STALL_S` by default — well above a
healthy commit (milliseconds) and well below the minutes a person needs to act on it. The
message names what was seen, not a cause it did not check: a frozen or hung disk and a database
another program keeps busy look the same from here.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from app.storage.server_link import shown
from app.storage.writer import RunWriter

DEFAULT_COMMIT_STALL_S = 10.0
ENV = "STORWATT_COMMIT_STALL_S"
#: how every announcement begins: the run view shows these in its storage banner
STALLED = "storage stalled:"
RESUMED = "storage resumed:"


class StallLimitError(ValueError):
    """``STORWATT_COMMIT_STALL_S`` is not a number of seconds the station can use."""


def commit_stall_limit() -> float:
    """The stall limit in seconds: ``STORWATT_COMMIT_STALL_S`` or the default."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return DEFAULT_COMMIT_STALL_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 1.0 <= value <= 3600.0):
        raise StallLimitError(f"{ENV}={text!r} is not a stall limit: give seconds from 1 to "
                              f"3600 (default {DEFAULT_COMMIT_STALL_S:g})")
    return value


@dataclass
class StallWatch:
    """Polled by the sequencer with every sample (``Sequencer.add_watch``): returns the
    (level, message) lines to log — one when a write passes the limit, one when it ends."""

    writer: RunWriter
    limit_s: float = DEFAULT_COMMIT_STALL_S
    _announced: int = 0  # the write whose stall was announced (0: none)
    _lasted_s: float = 0.0  # how long that write had taken when last seen

    def __call__(self) -> list[tuple[str, str]]:
        write, stalled = self.writer.write_under_way, self.writer.stalled_s()
        said = []
        if self._announced and write != self._announced:
            said.append(("INFO", f"{RESUMED} the write to {shown(self.writer.database.url)} "
                                 f"completed after a stall of at least {self._lasted_s:.0f} s; "
                                 "every sample held is stored"))
            self._announced = 0
        if self._announced:
            self._lasted_s = max(self._lasted_s, stalled)
        elif write and stalled >= self.limit_s:
            self._announced, self._lasted_s = write, stalled
            said.append(("WARNING", self._stalled(stalled)))
        return said

    def _stalled(self, stalled: float) -> str:
        held = self.writer.held()
        where = ("in memory only" if not held.in_journal else
                 f"{held.in_journal} in the run journal, {held.samples - held.in_journal} in "
                 "memory only")
        return (f"{STALLED} a write to {shown(self.writer.database.url)} has not completed for "
                f"{stalled:.0f} s (limit {ENV} = {self.limit_s:g} s: a disk that stopped "
                "completing writes — frozen, hung, failing — or a database another program "
                f"keeps busy); {held.samples} samples "
                f"not yet stored are held, {where} — the run goes on, but if the station stops "
                "before the write completes, what is in memory is lost")
