"""Response-time histograms on fio's json+ bin layout (method-notes §5, §7, §9).

fio reports total latencies (submission to completion, the host's response time) as
``lat_ns.bins`` when the job sets ``lat_percentiles=1``: bucket value in ns → IO count, only
non-empty buckets, counts summing to the IO total. Keeping that layout end to end means a
histogram merged from many one-second snapshots, jobs or load hosts is still exactly what fio
would have printed for the whole run, and percentiles computed here reproduce fio's own: the
level is the first bucket whose running count reaches p/100·N (fio's stat.c rule).
Confidence levels are the PTS "number of nines" (99 % … 99.999 %, method-notes §5). A level
p says something only when at least one IO in 1/(1 − p) lies beyond it, so it needs
N ≥ 1/(1 − p) IOs (99.999 % needs 100,000); below that it is "not supported" and every view
shows "n/a (N IOs)" instead of a number (fio itself prints one from any N).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from app.metrics.errors import MetricsError
from app.metrics.formatting import format_figure

DEFAULT_LEVELS = (99.0, 99.9, 99.99, 99.999)


def min_ios(level_pct: float) -> int:
    """IOs a confidence level needs, N ≥ 1/(1 − p): 99 % → 100, 99.999 % → 100,000.

    Computed in decimal from the level as written, so 99.999 gives exactly 100,000 (in
    binary floating point 1/(1 − 0.99999) is 100,000.0000008 and would ask for one more)."""
    p = Decimal(repr(float(level_pct)))
    if not 0 < p < 100:
        raise MetricsError(f"confidence level must be in (0, 100) %, got {level_pct}")
    return math.ceil(Decimal(100) / (Decimal(100) - p))


@dataclass(frozen=True)
class ConfidenceLevel:
    """One confidence level of a histogram as every view shows it (one rule, one text)."""

    level_pct: float
    ms: float | None  # None: the IO count does not support this level
    ios: int

    @property
    def shown_ms(self) -> float | None:
        """The response time a view may show or draw; None when the level is not supported
        (also for records stored before the rule, whose small-N levels carry a number)."""
        if self.ms is None or not math.isfinite(self.ms) or self.ios < min_ios(self.level_pct):
            return None
        return float(self.ms)

    def value_text(self) -> str:
        """"1.23 ms", or "n/a (5,000 IOs)" when the IO count cannot support the level."""
        ms = self.shown_ms
        return f"n/a ({self.ios:,} IOs)" if ms is None else f"{format_figure(ms)} ms"

    def text(self) -> str:
        return f"{self.level_pct:g} %: {self.value_text()}"


def confidence_records(confidence_ms: Mapping[float, float | None],
                       ios: int) -> tuple[ConfidenceLevel, ...]:
    """A stored histogram's levels, ascending, each with its support by the IO count."""
    return tuple(ConfidenceLevel(float(level), ms, int(ios))
                 for level, ms in sorted(confidence_ms.items()))


#: histograms sorted together in ``merge``: ~75k entries, small enough to stay in cache
_MERGE_CHUNK = 256


def _summed(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique values, ascending, with the sum of each one's counts (int64, exact).

    One sort and one ``reduceat``: no knowledge of fio's bucket layout is needed to sum bins,
    so the measurement core takes any value → count mapping."""
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    if values.size == 0:
        return values, counts
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return values[starts], np.add.reduceat(counts, starts)


def _frozen(a: np.ndarray) -> np.ndarray:
    """Read-only int64 copy: a histogram is a record (§9 counts are exact integers)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class ResponseTimeHistogram:
    """Sorted unique bucket values (ns) with their counts; immutable (method-notes §7, §9)."""

    values_ns: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_arrays(cls, values_ns: Iterable[int], counts: Iterable[int]) -> ResponseTimeHistogram:
        """From parallel bucket values (ns) and counts, in any order, repeats summed.

        Counts are summed as int64 (exact); empty buckets are dropped, as fio drops them.
        """
        v = np.asarray(values_ns if isinstance(values_ns, np.ndarray) else list(values_ns),
                       dtype=np.int64)
        c = np.asarray(counts if isinstance(counts, np.ndarray) else list(counts),
                       dtype=np.int64)
        if v.ndim != 1 or v.shape != c.shape:
            raise MetricsError(f"{v.size} bucket values but {c.size} counts")
        if np.any(c < 0):
            raise MetricsError("negative bucket count")
        if np.any(v < 0):
            raise MetricsError("negative bucket value")
        if v.size > 1 and not np.all(v[1:] > v[:-1]):  # fio prints keys ascending
            v, c = _summed(v, c)
        keep = c > 0
        return cls(_frozen(v[keep]), _frozen(c[keep]))

    @classmethod
    def from_bins(cls, bins: Mapping[int | str, int]) -> ResponseTimeHistogram:
        """From a fio ``lat_ns.bins`` mapping (keys are JSON strings of ns, method-notes §9)."""
        try:
            values = np.fromiter(map(int, bins.keys()), dtype=np.int64, count=len(bins))
            counts = np.fromiter(map(int, bins.values()), dtype=np.int64, count=len(bins))
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise MetricsError(f"not a fio bins mapping: {exc}") from None
        return cls.from_arrays(values, counts)

    @classmethod
    def merge(cls, *hists: ResponseTimeHistogram) -> ResponseTimeHistogram:
        """Sum of histograms (jobs, load hosts, seconds); associative and commutative.

        The bins are summed by value, whatever layout they come in: fio's json+ keys are
        bucket midpoints (method-notes §9), so a sum of fio bins is still fio's layout. Summed
        in chunks that stay in cache, then the chunks' sums (10,000 one-second snapshots in
        ~0.1 s against the 200 ms goal, docs/performance.md). Counts stay int64: no float rounding
        of large totals.
        """
        if not hists:
            return cls.from_arrays([], [])
        parts = [_summed(np.concatenate([h.values_ns for h in hists[lo:lo + _MERGE_CHUNK]]),
                         np.concatenate([h.counts for h in hists[lo:lo + _MERGE_CHUNK]]))
                 for lo in range(0, len(hists), _MERGE_CHUNK)]
        return cls.from_arrays(np.concatenate([values for values, _ in parts]),
                               np.concatenate([counts for _, counts in parts]))

    @classmethod
    def difference(cls, later: ResponseTimeHistogram,
                   earlier: ResponseTimeHistogram) -> ResponseTimeHistogram:
        """Per-interval histogram from two cumulative snapshots (fio --status-interval prints
        cumulative documents, method-notes §9); a count going down is an error, not a zero."""
        values = np.union1d(later.values_ns, earlier.values_ns)
        diff = later._counts_at(values) - earlier._counts_at(values)
        if np.any(diff < 0):
            bad = int(values[np.argmin(diff)])
            raise MetricsError(f"later snapshot has fewer IOs than the earlier one in bucket "
                               f"{bad} ns: snapshots out of order or from different runs")
        return cls.from_arrays(values, diff)

    def _counts_at(self, values: np.ndarray) -> np.ndarray:
        """Count of each of ``values`` in this histogram, 0 where absent (for §9 differences)."""
        pos = np.searchsorted(self.values_ns, values)
        pos_c = np.minimum(pos, max(self.values_ns.size - 1, 0))
        hit = (pos < self.values_ns.size) & (self.values_ns[pos_c] == values) if \
            self.values_ns.size else np.zeros(values.shape, bool)
        return np.where(hit, self.counts[pos_c] if self.counts.size else 0, 0)

    @property
    def total(self) -> int:
        """N, the IO count; equals fio's ``lat_ns.N`` (method-notes §9)."""
        return int(self.counts.sum())

    def percentile(self, p: float) -> float:
        """Bucket value (ns) at percentile ``p``: the first bucket whose running count reaches
        p/100·N — fio's own rule, so the result equals fio's ``lat_ns.percentile`` (§9)."""
        if not (np.isfinite(p) and 0 < p <= 100):
            raise MetricsError(f"percentile must be in (0, 100], got {p}")
        if self.total == 0:
            raise MetricsError("empty histogram has no percentiles")
        threshold = p / 100.0 * self.total
        idx = int(np.searchsorted(np.cumsum(self.counts), threshold, side="left"))
        return float(self.values_ns[min(idx, self.values_ns.size - 1)])

    def confidence_levels(self, levels: Sequence[float] = DEFAULT_LEVELS
                          ) -> dict[float, float | None]:
        """Response time in **ms** at each confidence level (PTS number of nines, method-notes
        §5); ``None`` for a level the IO count does not support (N < 1/(1 − p))."""
        n = self.total
        return {float(level): self.percentile(level) / 1e6 if n >= min_ios(level) else None
                for level in levels}

    def count_above(self, ceiling_ns: float) -> int:
        """IOs in buckets above the response-time ceiling line (method-notes §5)."""
        return int(self.counts[self.values_ns > ceiling_ns].sum())

    def mean_ns(self) -> float:
        """Mean of the bucket values weighted by count: within a bucket's width of fio's exact
        mean (§9 buckets are ~1.6 % wide); the response-time average of §2 uses fio's own."""
        if self.total == 0:
            raise MetricsError("empty histogram has no mean")
        return float(np.dot(self.values_ns.astype(float), self.counts) / self.total)

    def to_bins(self) -> dict[int, int]:
        """Back to fio's json+ ``bins`` layout (§9), e.g. for storage."""
        return {int(v): int(c) for v, c in zip(self.values_ns, self.counts)}

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(bucket values in ns, counts), ascending, read-only — for plots of the §5 histogram."""
        return self.values_ns, self.counts


def ceiling_meaning(ceiling_ms: float, above: int, max_avg_ms: float | None = None) -> str:
    """What the response-time ceiling line means for validity, in one sentence for the GUI
    and the report (docs/method-notes.md §2, §5).

    The method's rule is on the AVERAGE response time of the measurement interval; the ceiling
    is the application's line on the histogram (PTS), shown so the tail can be judged — IOs
    above it do not make a metric INVALID. Without this, "1,194 IOs above 30 ms" next to a
    VALID metric reads like a contradiction."""
    limit = f" ({max_avg_ms:g} ms)" if max_avg_ms is not None else ""
    return (f"The {ceiling_ms:g} ms ceiling is informational: IOs above it ({above:,} here) "
            f"do not make the metric INVALID. Validity is judged on the AVERAGE response time "
            f"of the measurement interval against the method's limit{limit}.")
