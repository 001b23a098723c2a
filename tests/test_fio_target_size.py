"""A load host's target size as its own fio reads it (drivers/fio/target_size.py): one
512-byte read completes exactly when it ends inside the target, proven through a loopback
``fio --server``; the bisection on that rule finds the size to the sector; the engine takes it
for the curved hot band on load hosts, and refuses hosts whose targets differ."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.method.loader import load_method
from drivers.clock import FakeClock
from drivers.fio.engine import FioEngine
from drivers.fio.target_size import host_reads_at, probe_text, target_size
from drivers.interfaces import WorkloadError
from tests.support.fio import fio_servers, needs_fio

ODD = 8 * 2**20 + 12345  # a partial last sector: the size is told in whole sectors
WHOLE = ODD // 512 * 512


@pytest.mark.realtime("two reads through a real fio server prove the rule the probe uses")
@pytest.mark.fio
@needs_fio
def test_a_read_through_a_load_host_s_fio_completes_only_inside_its_target(
        tmp_path: Path) -> None:
    target = tmp_path / "t.dat"
    with target.open("wb") as f:
        f.truncate(ODD)
    with fio_servers(tmp_path, 1) as (host,):
        reads = host_reads_at("fio", host, str(target), tmp_path / "probe")
        assert [reads(probe_text(str(target), offset))
                for offset in (WHOLE - 512, WHOLE)] == [True, False]


def _model(size: int, asked: list[int]):
    """The rule the test above proves, for a target of ``size`` bytes."""
    def reads_at(text: str) -> bool:
        offset = int(re.search(r"^offset=(\d+)$", text, re.M).group(1))
        asked.append(offset)
        return offset + 512 <= size
    return reads_at


@pytest.mark.parametrize("size", [512, ODD, 3 * 2**30 + 7 * 8192, 100 * 10**12])
def test_the_bisection_finds_the_size_to_the_sector(size: int) -> None:
    asked: list[int] = []
    assert target_size(_model(size, asked), "/dev/sdx") == size // 512 * 512
    assert len(asked) <= 80  # 1 + a doubling from 1 GiB + a halving to the sector


def test_an_unreadable_target_is_refused() -> None:
    with pytest.raises(WorkloadError, match="could not read the first sector of /dev/sdx"):
        target_size(_model(0, []), "/dev/sdx")


def _stand_in(tmp_path: Path, sizes: dict[str, int]) -> str:
    """A stand-in fio answering each host's size-probe read by the rule, its size by port."""
    binary = tmp_path / "fio"
    cases = "\n".join(f"  *,{port}) size={size};;" for port, size in sizes.items())
    binary.write_text(f"""#!/bin/sh
case "$1" in --version) echo fio-3.33; exit 0;; --parse-only) exit 0;; esac
client="${{1#--client=}}"
case "$client" in
{cases}
esac
for last; do :; done
offset=$(sed -n 's/^offset=//p' "$last")
if [ -n "$offset" ] && [ $((offset + 512)) -le "$size" ]; then
  echo '{{"client_stats": [{{"jobname": "size-probe", "read": {{"total_ios": 1}}}}]}}'
  exit 0
fi
echo "fio: blocksize is larger than data set range" >&2; exit 1
""")
    binary.chmod(0o755)
    return str(binary)


@pytest.mark.process
def test_the_curved_hot_band_on_load_hosts_takes_the_size_their_fio_reads(
        tmp_path: Path) -> None:
    method = load_method("emerald-block-v3")
    work = method.profile("HOTBAND").at_intensity(method.search, 3, 1.0, "active")
    hosts = ("127.0.0.1:18001", "127.0.0.1:18002")
    agreed = FioEngine(["/dev/sdx"], clock=FakeClock(), workdir=tmp_path / "a",
                       fio_binary=_stand_in(tmp_path, {"18001": ODD, "18002": ODD}),
                       load_hosts=hosts)
    assert agreed._options_for(work).span == WHOLE  # the bands in whole blocks of it
    differ = FioEngine(["/dev/sdx"], clock=FakeClock(), workdir=tmp_path / "b",
                       fio_binary=_stand_in(tmp_path, {"18001": ODD, "18002": 2 * ODD}),
                       load_hosts=hosts)
    with pytest.raises(WorkloadError, match=r"the load hosts' /dev/sdx differ in size "
                                            r"\(127\.0\.0\.1:18001: 8,400,896 bytes, "
                                            r"127\.0\.0\.1:18002: 16,801,792 bytes\)"):
        differ._options_for(work)
