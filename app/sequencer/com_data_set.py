"""The evidence of a data-reduction COM check: what its data set really holds (issue 18 §5).

fio is asked for 50 % duplicate or 50 % compressible buffers (``drivers/fio/jobs.py::COM_DATA``);
what it wrote is measured where it was written (``drivers/fio/data_set.py``) and logged with the
run, so the SUT's reported savings are read against the data's real reducibility. Without a
capacity probe (a real array: its savings come from its management interface) the COM stays
NOT VERIFIED, and its reason carries the measured figure the technician compares with the
array's own report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drivers.interfaces import DataSetMeasure

#: block size of the COM data sets: the granularity fio repeats buffers at, and the one hashed
COM_BLOCK_BYTES = 256 * 1024
DataSetProbe = Callable[[int, int], tuple[DataSetMeasure, ...]]


def host_ratio(com: str, measures: Sequence[DataSetMeasure]) -> float:
    """The data set's measured ratio for ``com`` over every target (duplicates across two
    targets are not counted: an array dedupes within a volume)."""
    if com == "deduplication":
        distinct = sum(m.distinct_blocks for m in measures)
        return sum(m.blocks for m in measures) / distinct if distinct else float("nan")
    compressed = sum(m.compressed_bytes for m in measures)
    return sum(m.sampled_bytes for m in measures) / compressed if compressed else float("nan")


def data_set_evidence(probe: DataSetProbe | None, com: str, written_bytes: int) -> str:
    """One line for the run log and the COM's reason: the data set's measured ratio with how
    it was measured, or why it could not be. This is the data's reducibility as written, not
    the COM's ratio (the SUT's savings, from its reported capacity): the log says which is
    which, so "not measured" never stands beside a VALID ratio unexplained."""
    if probe is None:
        return (f"{com} data set's own reducibility not measured on the host: it was written "
                "where the station cannot read it (simulated SUT or load hosts)")
    try:
        measures = probe(written_bytes, COM_BLOCK_BYTES)
    except (OSError, ValueError) as exc:
        return f"{com} data set's own reducibility not measured on the host: {exc}"
    how = "by hash" if com == "deduplication" else "by zlib on sampled blocks"
    return (f"{com} data set measured on the host: {host_ratio(com, measures):.3f}:1 {how} "
            f"({'; '.join(m.describe() for m in measures)})")
