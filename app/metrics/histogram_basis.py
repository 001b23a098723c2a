"""Which latency a run's response-time histograms count, said the same way in every view.

Local fio returns its bins in json+ as total latency (``lat_ns``: submission to completion).
A load host's client returns no JSON while it shows live rates, so its per-second bins come
from fio's returned histogram log, which fio keeps for completion latency (``clat``) only
(docs/fio.md, "Final figures of a load host"). The IO counts, MiB/s and the mean response time
are total latency either way; only the histogram and its confidence levels differ, by the
submission time (0 with a synchronous engine, measured −8 to −16 % at the 99 % level with
libaio at queue depth 4). The run record holds the fact (its load hosts); this module is the
one place that turns it into words.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.records import RunConfig


@dataclass(frozen=True)
class HistogramBasis:
    """What the histogram bins of one run measure."""

    name: str  # "total latency" | "completion latency"
    fio_field: str  # fio's name for it
    note: str  # "" for total latency; else what it means for the levels

    @property
    def axis(self) -> str:
        return f"response time, {self.name} (ms, log scale)"

    @property
    def title(self) -> str:
        return f"Response-time ({self.name}, fio {self.fio_field}) histogram"

    def describe(self) -> str:
        """One line for a key/value table: the title and, if any, what it means."""
        return f"{self.title}: {self.note}" if self.note else self.title


TOTAL_LATENCY = HistogramBasis("total latency", "lat_ns", "")
COMPLETION_LATENCY = HistogramBasis(
    "completion latency", "clat",
    "The workload ran on load hosts, whose per-second bins come from fio's returned histogram "
    "log, which fio keeps for completion latency only: these levels leave out each IO's "
    "submission time (none with a synchronous engine). IO counts and the mean response time "
    "are total latency.")


def histogram_basis(config: RunConfig) -> HistogramBasis:
    return COMPLETION_LATENCY if config.sut.load_hosts else TOTAL_LATENCY
