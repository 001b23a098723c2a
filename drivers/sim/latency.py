"""fio's latency bucket layout, so simulated histograms look exactly like fio json+ output.

fio keeps completion latencies in log-linear buckets: values below 128 ns have a bucket each;
above, every power-of-two range is split into 64 equal buckets (FIO_IO_U_PLAT_BITS = 6). The
json+ ``clat_ns.bins`` keys are the bucket's representative value (its midpoint) in ns
(SPEC-NOTES §7, §9). Reproducing that layout lets the simulated lab feed the same histogram
code path as real fio.
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


def lognormal_bucket_probabilities(mean_ms: float, sigma: float = 0.55, draws: int = 50_000,
                                   seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Bucket values (ns) and probabilities of a log-normal response time with mean ``mean_ms``.

    Disk and array response times are right-skewed with a long tail; a log-normal with
    sigma ≈ 0.5 gives 99.999 % levels a few times the mean, as in the PTS seed's histograms.
    The bucket probabilities are estimated once from ``draws`` samples so that each simulated
    second only needs one ``multinomial`` draw, however many IOs it holds.
    """
    mean_ns = max(mean_ms, 1e-4) * 1e6
    mu = np.log(mean_ns) - sigma**2 / 2
    values = np.random.default_rng(seed).lognormal(mu, sigma, size=draws)
    uniq, counts = np.unique(bucket_index(values.astype(np.int64)), return_counts=True)
    return bucket_value(uniq), counts / counts.sum()
