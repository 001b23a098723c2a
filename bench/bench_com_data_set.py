"""Cost of measuring a COM data set on the host (issue 18 §5), beside plainly reading it.

After a data-reduction COM check the station reads back what fio wrote, hashes every block and
compresses a bounded sample (``drivers/fio/data_set.py``). Both figures come from the same
256 MiB file in one run: the plain read is the floor (page cache warm for both), so the ratio
is the measuring's own cost. Goal: at least 100 MB/s, so a data set the size of a COM check's
few minutes of writes is measured in well under a minute.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

from bench.figure import Figure, median_seconds
from drivers.fio.data_set import measure_data_set

COMMAND = "python -m bench.run_all com_data_set"
SIZE = 256 * 2**20
BLOCK = 256 * 1024
REPEATS = 3


def _data_set(path: Path) -> None:
    """Half the blocks repeat an earlier one, half of each block is zeros: like fio's 50 %."""
    rng = random.Random(18)
    blocks: list[bytes] = []
    with open(path, "wb") as out:
        for i in range(SIZE // BLOCK):
            block = (rng.choice(blocks) if blocks and i % 2 else
                     rng.randbytes(BLOCK // 2) + bytes(BLOCK // 2))
            blocks.append(block)
            out.write(block)


def _read(path: Path) -> None:
    with open(path, "rb", buffering=0) as data:
        while data.read(BLOCK):
            pass


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "com.dat"
        _data_set(path)
        _read(path)  # warm the page cache for both
        read_s = median_seconds(lambda: _read(path), REPEATS)
        measure_s = median_seconds(
            lambda: measure_data_set(path, BLOCK, os.path.getsize(path)), REPEATS)
    mb = SIZE / 1e6
    return [
        Figure("read a 256 MiB COM data set (page cache, median of 3)", round(mb / read_s, 1),
               "MB/s", "reference", None, COMMAND),
        Figure("measure it: hash every 256 KiB block + zlib on a 16 MiB sample (median of 3)",
               round(mb / measure_s, 1), "MB/s", "≥ 100 MB/s", mb / measure_s >= 100, COMMAND),
        Figure("measuring / reading time ratio", round(measure_s / read_s, 2), "",
               "informative", None, COMMAND),
    ]
