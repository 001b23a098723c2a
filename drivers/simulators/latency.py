"""Simulated response-time distributions in fio's latency bucket layout, so the simulated
lab feeds the same histogram code path as real fio."""

from __future__ import annotations

import functools

import numpy as np

from drivers.fio.buckets import bucket_index, bucket_value


@functools.lru_cache(maxsize=256)
def lognormal_bucket_probabilities(mean_ms: float, sigma: float = 0.55, draws: int = 50_000,
                                   seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Bucket values (ns) and probabilities of a log-normal response time with mean ``mean_ms``.

    Disk and array response times are right-skewed with a long tail; a log-normal with
    sigma ≈ 0.5 gives 99.999 % levels a few times the mean, as in the PTS seed's histograms.
    The bucket probabilities are estimated once from ``draws`` samples so that each simulated
    second only needs one ``multinomial`` draw, however many IOs it holds. The draws are
    seeded, so the result is a pure function of the arguments and is kept (read-only) for
    every later phase at the same mean: each estimate cost ~1.2 ms, paid at every phase start.
    """
    mean_ns = max(mean_ms, 1e-4) * 1e6
    mu = np.log(mean_ns) - sigma**2 / 2
    values = np.random.default_rng(seed).lognormal(mu, sigma, size=draws)
    uniq, counts = np.unique(bucket_index(values.astype(np.int64)), return_counts=True)
    buckets, probabilities = bucket_value(uniq), counts / counts.sum()
    buckets.flags.writeable = probabilities.flags.writeable = False  # shared by every caller
    return buckets, probabilities
