"""What fio's client prints while a job runs, and its ETA line parsed (drivers/fio/eta.py).

Fixtures in fixtures/fio/client_eta/ are real captures from fio 3.33 against two loopback
servers (its README lists the commands): one client process per host prints that host's rates
live; one process with two clients prints their sum; a client with JSON output prints nothing
until it exits, even with ``--eta=always`` and ``--output=FILE``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from drivers.fio.eta import EtaFormatError, EtaStatus, eta_lines, parse_eta_line
from drivers.fio.process import FioProcess
from tests.support.fio import needs_fio
from tests.support.time_budget import budget_s

CAPTURES = Path(__file__).parent / "fixtures" / "fio" / "client_eta"


def capture(name: str) -> tuple[list[str], list[dict]]:
    rows = [json.loads(line) for line in (CAPTURES / name).read_text().splitlines()]
    return rows[0]["argv"], rows[1:]


def statuses(rows: list[dict]) -> list[tuple[float, EtaStatus]]:
    return [(r["t"], s) for r in rows if r["stream"] == "stdout" for s in eta_lines(r["text"])]


def test_one_client_per_host_prints_that_hosts_rates_while_it_runs() -> None:
    for name, reads, writes in (("per-host-8766.jsonl", 699, 300),
                                ("per-host-8767.jsonl", 2000, 0)):
        _, rows = capture(name)
        exit_t = rows[-1]["t"]
        with_io = [(t, s) for t, s in statuses(rows) if s.iops > 0]
        assert len(with_io) >= 2 and all(t < exit_t - 0.5 for t, _ in with_io), name
        last = with_io[-1][1]
        assert (last.read_iops, last.write_iops) == (reads, writes)
        assert last.mib_per_s == pytest.approx((reads + writes) * 4 / 1024, rel=0.01)


def test_one_process_with_two_clients_prints_only_their_sum() -> None:
    _, rows = capture("one-process-two-clients.jsonl")
    last = [s for _, s in statuses(rows) if s.iops > 0][-1]
    assert last.jobs_running == 2
    assert last.read_iops == 2703 and last.write_iops == 300  # 2000 + ~700 reads: no split
    assert last.read_kib_s == pytest.approx(10_800)  # printed "10.8M": 10.8 × 1000 KiB/s


def test_a_json_client_prints_nothing_until_it_exits() -> None:
    argv, rows = capture("json-output-file.jsonl")
    assert "--eta=always" in argv and "--output-format=json" in argv
    assert [r["stream"] for r in rows] == ["exit"] and rows[0]["t"] > 4  # ran 4 s, said nothing


def test_rate_numbers_and_their_unit_prefixes() -> None:
    s = parse_eta_line("Jobs: 4 (f=4): [m(4)][50.0%][r=1.5Mi,w=512Ki][r=12.3k,w=1 IOPS]"
                       "[eta 01m:00s]")
    assert s == EtaStatus(4, 12_300, 1, 1536, 512)
    assert parse_eta_line("Jobs: 2 (f=2), 0-3000 IOPS") == EtaStatus(2)  # no IO yet
    assert parse_eta_line("<vm> Starting 1 process") is None
    with pytest.raises(EtaFormatError, match="'12x'"):
        parse_eta_line("Jobs: 1 (f=1): [r(1)][1.0%][r=12x][r=1 IOPS][eta 00m:01s]")


@pytest.mark.realtime("real fio clients and their ETA lines over real seconds")
@pytest.mark.process
@needs_fio
def test_real_clients_show_per_host_rates_during_the_run_and_json_shows_none(
        tmp_path: Path, two_fio_servers) -> None:
    """The finding behind docs/fio.md, checked against the installed fio: per-host rates
    reach the station while the job runs from normal-output clients (one per host), and
    none from a JSON client; if a future fio prints them in JSON mode this test says so."""
    job = tmp_path / "rr.fio"
    job.write_text("[rr]\nioengine=null\nsize=1m\nrw=randread\nbs=4k\nrate_iops=500\n"
                   "time_based=1\nruntime=4\n")
    seen: dict[str, list[tuple[float, EtaStatus]]] = {}
    lock = threading.Lock()

    def watcher(key: str):
        def on_text(t: float, chunk: str) -> None:
            with lock:
                seen.setdefault(key, []).extend((t, s) for s in eta_lines(chunk) if s.iops)
        return on_text

    procs = {key: FioProcess(["fio", f"--client={host.replace(':', ',')}", "--eta=always",
                               "--eta-newline=1", *extra, str(job)], time.monotonic,
                              cwd=str(tmp_path), on_text=watcher(key))
             for key, host, extra in (
                 ("a", two_fio_servers[0], ()), ("b", two_fio_servers[1], ()),
                 ("json", two_fio_servers[1], ("--output-format=json",
                                               f"--output={tmp_path / 'out.json'}")))}
    ends = {}
    deadline = time.monotonic() + budget_s(30)
    while len(ends) < len(procs) and time.monotonic() < deadline:
        for key, proc in procs.items():
            if proc.exited and key not in ends:
                ends[key] = time.monotonic()
        time.sleep(0.02)
    for proc in procs.values():
        proc.stop()
    for key in ("a", "b"):
        rates = seen.get(key, [])
        assert rates and rates[0][0] < ends[key] - 0.5, (key, rates)
        assert all(s.read_iops == pytest.approx(500, rel=0.05) for _, s in rates[1:])
    assert "json" not in seen
    assert json.loads((tmp_path / "out.json").read_text())["client_stats"]
