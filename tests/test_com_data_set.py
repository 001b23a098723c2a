"""COM data sets measured where they were written, not taken from fio's settings (issue 18 §5)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from app.labs.local_fio import LocalDataSetProbe
from app.sequencer.com_data_set import COM_BLOCK_BYTES, data_set_evidence, host_ratio
from drivers.fio.data_set import measure_data_set
from tests.support.time_budget import budget_s

BLOCK = 4096


def _write_blocks(path: Path, blocks: list[bytes]) -> None:
    path.write_bytes(b"".join(blocks))


def test_duplicate_blocks_are_counted_by_hash(tmp_path: Path) -> None:
    unique = [random.Random(i).randbytes(BLOCK) for i in range(4)]
    data = tmp_path / "set.dat"
    _write_blocks(data, unique + unique[:2] + unique[:2])  # 8 blocks, 4 distinct
    measure = measure_data_set(data, BLOCK, 8 * BLOCK)
    assert (measure.blocks, measure.distinct_blocks) == (8, 4)
    assert measure.dedupe_ratio == 2.0
    assert measure.compression_ratio < 1.01  # random bytes do not compress


def test_half_zero_blocks_compress_about_two_to_one(tmp_path: Path) -> None:
    blocks = [random.Random(i).randbytes(BLOCK // 2) + bytes(BLOCK // 2) for i in range(16)]
    data = tmp_path / "set.dat"
    _write_blocks(data, blocks)
    measure = measure_data_set(data, BLOCK, 16 * BLOCK)
    assert measure.dedupe_ratio == 1.0
    assert 1.9 < measure.compression_ratio < 2.0


def test_only_the_written_region_is_measured_and_a_short_file_ends_it(tmp_path: Path) -> None:
    block = random.Random(1).randbytes(BLOCK)
    data = tmp_path / "set.dat"
    _write_blocks(data, [block] * 4 + [random.Random(i).randbytes(BLOCK) for i in range(4)])
    assert measure_data_set(data, BLOCK, 4 * BLOCK).dedupe_ratio == 4.0  # prefill not counted
    assert measure_data_set(data, BLOCK, 100 * BLOCK).blocks == 8
    with pytest.raises(ValueError, match="at least one block"):
        measure_data_set(data, BLOCK, BLOCK - 1)


def test_the_probe_splits_the_written_bytes_over_the_targets(tmp_path: Path) -> None:
    block = random.Random(2).randbytes(COM_BLOCK_BYTES)
    targets = []
    for name in ("a.dat", "b.dat"):
        path = tmp_path / name
        _write_blocks(path, [block] * 2 + [random.Random(name).randbytes(COM_BLOCK_BYTES)] * 2)
        targets.append(str(path))
    measures = LocalDataSetProbe(tuple(targets))(4 * COM_BLOCK_BYTES, COM_BLOCK_BYTES)
    assert [m.blocks for m in measures] == [2, 2]  # each target holds half from offset 0
    assert host_ratio("deduplication", measures) == 2.0


def test_evidence_says_why_a_data_set_was_not_measured(tmp_path: Path) -> None:
    assert "cannot read it" in data_set_evidence(None, "deduplication", 10)

    def gone(written: int, block: int):
        raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "x"))

    assert "not measured on the host: [Errno 2]" in data_set_evidence(gone, "compression", 10)


def _fio_write(path: Path, *options: str) -> None:
    subprocess.run(["fio", "--name=com", f"--filename={path}", "--size=32M", "--bs=256k",
                    "--rw=write", "--ioengine=psync", "--refill_buffers=1",
                    "--output-format=terse", *options], check=True, capture_output=True,
                   timeout=budget_s(120))


@pytest.mark.realtime("real fio writes the COM data sets")
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_fio_data_sets_measure_as_reducible_as_asked_give_or_take_fio(tmp_path: Path) -> None:
    """fio 3.33's 50 % requests, measured: dedupe about 2:1 (2.17 seen on 64 MiB), compression
    about 2:1 (1.96 seen); fio's default buffers are neither."""
    plain, dedupe, compress = (tmp_path / n for n in ("plain.dat", "dedupe.dat", "comp.dat"))
    _fio_write(plain)
    _fio_write(dedupe, "--dedupe_percentage=50")
    _fio_write(compress, "--buffer_compress_percentage=50")
    size = os.path.getsize(plain)
    base = measure_data_set(plain, COM_BLOCK_BYTES, size)
    assert base.dedupe_ratio == 1.0 and base.compression_ratio < 1.05
    assert 1.6 < measure_data_set(dedupe, COM_BLOCK_BYTES, size).dedupe_ratio < 2.8
    assert 1.7 < measure_data_set(compress, COM_BLOCK_BYTES, size).compression_ratio < 2.2
