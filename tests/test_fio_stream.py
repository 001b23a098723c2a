"""fio output parsing on REAL captures (fio 3.33, this project's build image).

tests/fixtures/fio/ — how each capture was made (every job with the station's latency and
random options: lat_percentiles=1 clat_percentiles=0 random_generator=tausworthe64
randrepeat=0 percentile_list=99:99.9:99.99:99.999, so bins are total latency, lat_ns):
  status_stream_randrw.txt  fio --output-format=json+ --status-interval=1, psync randrw 8 KiB,
                            3 s: cumulative documents back to back
  sigint_stream.txt         the same, write job stopped with SIGINT (text line between documents)
  read_only.json            pure random-read job: the idle write direction has no bins
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.metrics.histogram import ResponseTimeHistogram
from drivers.fio.stream import (EMPTY, DocumentSplitter, IntervalSeries,
                                difference, snapshot_of_document, snapshot_of_jobs)
from drivers.interfaces import WorkloadError

FIX = Path(__file__).parent / "fixtures" / "fio"


def split(text: str, chunk: int = 997) -> tuple[list[dict], DocumentSplitter]:
    splitter = DocumentSplitter()
    docs = []
    for i in range(0, len(text), chunk):
        docs += splitter.feed(text[i:i + chunk])
    return docs, splitter


def slices_of(docs: list[dict]):
    prev, out = EMPTY, []
    for k, doc in enumerate(docs):
        snap = snapshot_of_document(doc)
        out.append(difference(snap, prev, k, k + 1))
        prev = snap
    return out, prev


def test_cumulative_stream_split_in_arbitrary_chunks_telescopes_to_the_final_totals() -> None:
    docs, splitter = split((FIX / "status_stream_randrw.txt").read_text())
    assert len(docs) == 4 and splitter.pending == ""
    slices, final = slices_of(docs)
    job = docs[-1]["jobs"][0]
    assert sum(s.read_ios for s in slices) == job["read"]["total_ios"]
    assert sum(s.write_ios for s in slices) == job["write"]["total_ios"]
    assert sum(s.read_bytes + s.write_bytes for s in slices) == \
        job["read"]["io_bytes"] + job["write"]["io_bytes"]
    merged = ResponseTimeHistogram.merge(*(ResponseTimeHistogram.from_bins(s.latency_bins)
                                           for s in slices))
    assert merged.total == final.ios == job["read"]["lat_ns"]["N"] + job["write"]["lat_ns"]["N"]
    # the interval mean latency is differenced exactly: weighted mean of slices == fio's mean
    mean_ms = sum(s.avg_resp_ms * s.ios for s in slices) / final.ios
    expected = (job["read"]["lat_ns"]["mean"] * job["read"]["lat_ns"]["N"]
                + job["write"]["lat_ns"]["mean"] * job["write"]["lat_ns"]["N"]) / final.ios / 1e6
    assert mean_ms == pytest.approx(expected, rel=1e-9)


def test_response_time_is_total_latency_not_completion_latency() -> None:
    """Mean, max and bins come from lat_ns (submission to completion), never clat_ns."""
    docs, _ = split((FIX / "status_stream_randrw.txt").read_text())
    job = docs[-1]["jobs"][0]
    snap = snapshot_of_document(docs[-1])
    lat = [job[d]["lat_ns"] for d in ("read", "write")]
    clat = [job[d]["clat_ns"] for d in ("read", "write")]
    assert snap.lat_sum_ns == pytest.approx(sum(x["mean"] * x["N"] for x in lat), rel=1e-12)
    assert snap.lat_sum_ns > sum(x["mean"] * x["N"] for x in clat)  # submission time included
    assert snap.max_ns == max(x["max"] for x in lat)
    merged = {}
    for x in lat:
        for k, v in x["bins"].items():
            merged[int(k)] = merged.get(int(k), 0) + v
    assert snap.bins == merged


def test_a_document_without_total_latency_bins_is_refused() -> None:
    """A completion-only capture (no lat_percentiles=1) must not pass for a response time."""
    doc = json.loads((FIX / "read_only.json").read_text())
    del doc["jobs"][0]["read"]["lat_ns"]["bins"]
    with pytest.raises(WorkloadError, match="lat_percentiles=1"):
        snapshot_of_document(doc)


def test_sigint_terminated_stream_with_text_between_documents() -> None:
    docs, splitter = split((FIX / "sigint_stream.txt").read_text(), chunk=4096)
    assert any("terminating on signal 2" in line for line in splitter.text_lines)
    assert len(docs) >= 2
    slices, final = slices_of(docs)
    assert final.write_ios == docs[-1]["jobs"][0]["write"]["total_ios"] > 0
    assert sum(s.write_ios for s in slices) == final.write_ios


def test_a_text_line_split_across_reads_stays_one_line() -> None:
    """The reader hands over whatever one read gave (drivers/fio/process.py), so a line of
    text between documents can arrive in pieces: it is kept whole for the error message."""
    text = (FIX / "sigint_stream.txt").read_text()
    at = text.index("terminating on signal 2") + 5
    for cuts in ((at,), (at - 3, at, at + 4)):
        splitter = DocumentSplitter()
        for a, b in zip((0, *cuts), (*cuts, len(text))):
            splitter.feed(text[a:b])
        assert "fio: terminating on signal 2" in splitter.text_lines, cuts
        assert not [line for line in splitter.text_lines if line.startswith("fio: term")
                    and line != "fio: terminating on signal 2"]


def test_idle_direction_without_bins() -> None:
    doc = json.loads((FIX / "read_only.json").read_text())
    assert "bins" not in doc["jobs"][0]["write"]["lat_ns"]
    snap = snapshot_of_jobs(doc["jobs"])
    assert snap.write_ios == 0 and snap.read_ios == doc["jobs"][0]["read"]["total_ios"]
    assert sum(snap.bins.values()) == snap.read_ios


def test_truncated_tail_stays_pending() -> None:
    text = (FIX / "status_stream_randrw.txt").read_text()
    docs, splitter = split(text[: len(text) - 500])
    assert len(docs) == 3 and splitter.pending.startswith("{")


def test_interval_max_is_exact_when_the_cumulative_max_grew() -> None:
    docs, _ = split((FIX / "status_stream_randrw.txt").read_text())
    slices, final = slices_of(docs)
    assert max(s.max_resp_ms for s in slices) == pytest.approx(final.max_ns / 1e6)
    for s in slices:  # never below the slice's own highest bucket's lower half
        assert s.max_resp_ms * 1e6 >= max(s.latency_bins) * 63 / 64


def test_interval_series_skips_repeated_documents_and_anchors_on_arrival() -> None:
    docs, _ = split((FIX / "status_stream_randrw.txt").read_text())
    series = IntervalSeries(100.0)
    first = series.add(101.0, snapshot_of_document(docs[0]))
    assert first is not None and (first.t_start, first.t_end) == (100.0, 101.0)
    assert series.add(101.5, snapshot_of_document(docs[0])) is None  # same document again
    second = series.add(102.0, snapshot_of_document(docs[1]))
    assert second is not None and second.t_start == 101.0 and second.ios > 0


def test_a_document_without_jobs_is_a_clear_error() -> None:
    with pytest.raises(WorkloadError, match="without 'jobs'"):
        snapshot_of_document({"fio version": "fio-3.33"})
