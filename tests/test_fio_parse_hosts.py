"""Load hosts' job files are checked by one ``fio --parse-only`` (one per file, one after
another, held the start ~1.5 s with 8 hosts, issue 27), and a rejected file is still named."""

from __future__ import annotations

from pathlib import Path

import pytest

import drivers.fio.engine as fio_engine
from drivers.clock import FakeClock
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadError, WorkloadProfile

HOSTS = ("127.0.0.1:18001", "127.0.0.1:18002", "127.0.0.1:18003")
MW1 = WorkloadProfile("MW1", 8192, 70, True, 8192, queue_depth=1, jobs=1, duration_s=1)


def _engine(tmp_path: Path) -> tuple[FioEngine, Path]:
    """An engine on a stand-in fio that logs each call and rejects a file saying "bogus"."""
    log = tmp_path / "calls.log"
    binary = tmp_path / "fio"
    binary.write_text(f"""#!/bin/sh
echo "$@" >> {log}
case "$1" in
  --version) echo fio-3.33;;
  --parse-only) shift; for f in "$@"; do
      if grep -q bogus "$f"; then echo "Bad option <bogus=1>" >&2; exit 1; fi; done;;
  *) exit 0;;
esac
""")
    binary.chmod(0o755)
    engine = FioEngine([str(tmp_path / "t.dat")], clock=FakeClock(), fio_binary=str(binary),
                       load_hosts=HOSTS, policy=TargetPolicy(create_size=8 << 20),
                       workdir=tmp_path)
    engine.check()
    return engine, log


def _parse_calls(log: Path) -> list[list[str]]:
    return [line.split()[1:] for line in log.read_text().splitlines()
            if line.startswith("--parse-only")]


@pytest.mark.process
def test_every_hosts_job_file_is_checked_by_one_fio(tmp_path: Path) -> None:
    engine, log = _engine(tmp_path)
    engine.start(MW1)
    engine.close()
    calls = _parse_calls(log)
    assert len(calls) == 1 and [Path(f).name for f in calls[0]] == \
        ["MW1-host1.fio", "MW1-host2.fio", "MW1-host3.fio"]


@pytest.mark.process
def test_a_rejected_hosts_job_file_is_named(tmp_path: Path, monkeypatch) -> None:
    job_text = fio_engine.job_text

    def second_host_bogus(profile, options):
        text = job_text(profile, options)
        return text + "bogus=1\n" if options.host == 1 else text

    monkeypatch.setattr(fio_engine, "job_text", second_host_bogus)
    engine, log = _engine(tmp_path)
    with pytest.raises(WorkloadError, match=r"rejected the job file MW1-host2\.fio: Bad option"):
        engine.start(MW1)
    assert not engine.running
    assert len(_parse_calls(log)) == 3  # all together, then host 1 alone, then host 2


@pytest.mark.process
def test_the_curved_hot_band_runs_on_load_hosts_in_the_given_target_size(
        tmp_path: Path) -> None:
    """The reference in-band curve needs the band's size in bytes; the station cannot read a
    load host's device, but a given target size is every host's range (fio creates its file
    of that size there): each host's file then has its bands in whole blocks, on the curve,
    with its share of the rate. Without a size the start is refused, naming what to give."""
    from app.method.loader import load_method
    method = load_method("emerald-block-v3")
    work = method.profile("HOTBAND").at_intensity(method.search, 3, 1.0, "active")
    engine, _ = _engine(tmp_path)
    engine.start(work)
    engine.close()
    for i in (1, 2, 3):
        text = (tmp_path / f"host{i}" / f"HOTBAND-host{i}.fio").read_text()
        hot1 = text[text.index("[HOTBAND-hot1-read]"):].split("\n\n")[0]
        assert "random_distribution=zoned_abs:" in hot1
        assert "offset=843776\n" in hot1  # 10 % of 8 MiB, up to a whole 8 KiB block
        assert "rate_iops=196,0\n" in hot1  # 3000 IOPS × 28 % × 70 % reads / 3 hosts
    unsized = FioEngine([str(tmp_path / "t.dat")], clock=FakeClock(),
                        fio_binary=str(tmp_path / "fio"), load_hosts=HOSTS, workdir=tmp_path)
    unsized.check()
    with pytest.raises(WorkloadError, match="give the target size, also for load hosts"):
        unsized.start(work)
