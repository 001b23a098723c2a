"""The load-host clock check's verdict: one run-log line per host (docs/fio.md, "Load-host
clock check").

The station stamps every fio figure on its own clock when it arrives, so its per-second IO and
power line up whatever a load host's clock says. A host clock off by more than half a sample
period still misaligns everything stamped *on the host* — fio's own logs, the host's system
log, a SUT event a lab matches against the report's seconds — so the check warns, and it warns
on the largest offset the measurement allows (offset + uncertainty): a clock that cannot be
shown to be within the limit is not called good.
"""

from __future__ import annotations

import math

from drivers.interfaces import HostClock

METHOD = ("fio IO log stamped on the host (log_unix_epoch) against the station's wall time "
          "around the probe's stop")


def clock_verdict(clock: HostClock, sample_period_s: float) -> tuple[str, str]:
    """(level, message) for the run log: INFO within half a sample period, else WARNING."""
    limit = sample_period_s / 2
    if clock.error or not math.isfinite(clock.offset_s):
        return ("WARNING", f"load host {clock.host}: clock offset not measured "
                f"({clock.error or 'no result'}); IO stamped on that host cannot be matched "
                f"to the power samples within {limit:g} s")
    figure = f"{clock.offset_s * 1000:+.0f} ms ± {clock.uncertainty_s * 1000:.0f} ms"
    if clock.worst_s <= limit:
        return ("INFO", f"load host {clock.host}: clock offset {figure} (host − station, "
                f"{METHOD}); within half a sample period ({limit:g} s)")
    return ("WARNING", f"load host {clock.host}: clock offset {figure} (host − station, "
            f"{METHOD}) may exceed half a sample period ({limit:g} s): records stamped on "
            f"that host may be misaligned with the per-second power samples; synchronise its "
            f"clock (NTP/PTP) before a measurement run")
