"""What a COM data set really holds, measured on the host that wrote it (issue 18 §5).

A data-reduction COM check writes data with a known reducible share (fio's
``dedupe_percentage`` / ``buffer_compress_percentage`` with ``refill_buffers``,
``drivers/fio/jobs.py::COM_DATA``). fio's percentages are requests, not measurements: with
``dedupe_percentage=50`` fio 3.33 wrote 64 MiB that hash to 2.17:1, not 2:1. So the station
reads back what it wrote and measures the ratio itself (method-notes §9, "verify by hashing
blocks, not by gzip"):

* **deduplication** — every block of the written region hashed (SHA-256; 0.8 GB/s here, faster
  than BLAKE2b on this CPU); the ratio is blocks ÷ distinct blocks, at the job's block size
  (the granularity fio repeats buffers at);
* **compression** — an even sample of at most 16 MiB of blocks compressed with zlib level 1
  (fast, like the inline compressors arrays use; level 6 gave 1.996:1 where level 1 gave
  1.985:1 on fio-like half-random blocks, at a third more time); the ratio is sampled bytes ÷
  compressed bytes. Compression is the slow part (about 20 MB/s on random bytes), hence the
  bounded sample; docs/performance.md has the cost.

The SUT's reported savings are then judged against these figures, never against fio's settings.
Reading is all this module does: it never opens a target for writing.
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

from drivers.interfaces import DataSetMeasure

#: compress at most this many bytes of sampled blocks: a bounded cost on a large data set
COMPRESSION_SAMPLE_BYTES = 16 * 2**20
ZLIB_LEVEL = 1


def measure_data_set(path: str | Path, block_size: int, length: int) -> DataSetMeasure:
    """Hash every whole block of ``path``'s first ``length`` bytes and compress an even sample
    of them. Raises ``OSError`` when the file cannot be read (the caller reports it)."""
    if block_size <= 0 or length < block_size:
        raise ValueError(f"{path}: need at least one block of {block_size} bytes to measure, "
                         f"got {length} bytes")
    blocks = length // block_size
    stride = max(1, (blocks * block_size) // COMPRESSION_SAMPLE_BYTES)
    digests: set[bytes] = set()
    sampled = compressed = 0
    with open(path, "rb", buffering=0) as data:
        for index in range(blocks):
            block = data.read(block_size)
            if len(block) < block_size:
                blocks = index  # the file is shorter than the region written
                break
            digests.add(hashlib.sha256(block).digest())
            if index % stride == 0:
                sampled += len(block)
                compressed += len(zlib.compress(block, ZLIB_LEVEL))
    return DataSetMeasure(str(path), block_size, blocks, len(digests), sampled, compressed)
