"""fio's latency bucket layout (stat.h: FIO_IO_U_PLAT_BITS = 6, 29 groups).

Values below 128 ns have a bucket each; above, every power-of-two range is split into 64 equal
buckets, and json+ prints each bucket's midpoint in ns (method-notes §7, §9). The simulated SUT
uses this to produce fio-identical histograms. The metrics core does not need it: it sums bins
by value, and a sum of fio's midpoints stays on fio's layout.
"""

from __future__ import annotations

import numpy as np

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS  # 64 buckets per power of two
PLAT_GROUPS = 29
PLAT_NR = PLAT_GROUPS * PLAT_VAL


def bucket_index(ns: np.ndarray) -> np.ndarray:
    """Bucket index of each latency value (vectorised form of fio's value→index mapping)."""
    val = np.asarray(ns, dtype=np.int64).clip(min=0)
    msb = np.zeros_like(val)
    nz = val > 0
    msb[nz] = np.floor(np.log2(val[nz])).astype(np.int64)
    error_bits = msb - PLAT_BITS
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (val >> error_bits.clip(min=0))
    idx = np.where(msb <= PLAT_BITS, val, base + offset)
    return idx.clip(max=PLAT_NR - 1)


def bucket_value(idx: np.ndarray) -> np.ndarray:
    """Representative (midpoint) value in ns of each bucket index, as fio prints it."""
    i = np.asarray(idx, dtype=np.int64)
    error_bits = (i >> PLAT_BITS) - 1
    base = np.left_shift(np.int64(1), (error_bits + PLAT_BITS).clip(min=0))
    k = i % PLAT_VAL
    mid = base + ((k + 0.5) * np.left_shift(np.int64(1), error_bits.clip(min=0))).astype(np.int64)
    return np.where(i < (PLAT_VAL << 1), i, mid)
