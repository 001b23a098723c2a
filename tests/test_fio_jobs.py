"""Job files: the method's profiles as fio options, injection refused, fio accepts them."""

from __future__ import annotations

from dataclasses import replace

import shutil
import subprocess
from pathlib import Path

import pytest

from drivers.fio.jobs import JobOptions, default_ioengine, job_text
from drivers.interfaces import WorkloadError, WorkloadProfile
from tests.support.fio import HOT, HOTBAND

KIB = 1024
SIX = [WorkloadProfile("MW1", 8 * KIB, 70, True, 8 * KIB, duration_s=60),
       WorkloadProfile("MW2", 8 * KIB, 70, True, 8 * KIB, rate_iops=(700, 300), duration_s=60),
       WorkloadProfile("RW", 8 * KIB, 0, True, 8 * KIB),
       WorkloadProfile("RR", 8 * KIB, 100, True, 8 * KIB),
       WorkloadProfile("SW", 256 * KIB, 0, False, 256 * KIB),
       WorkloadProfile("SR", 256 * KIB, 100, False, 256 * KIB)]


def opts(tmp_path: Path, **kw) -> JobOptions:
    return JobOptions((str(tmp_path / "a.dat"),), "psync", False, 8 << 20, **kw)


def options_of(text: str, section: str) -> dict[str, str]:
    lines = text.split(f"[{section}]\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_the_six_profiles_map_to_their_rw_modes() -> None:
    want = {"MW1": ("randrw", "70"), "MW2": ("randrw", "70"), "RW": ("randwrite", None),
            "RR": ("randread", None), "SW": ("write", None), "SR": ("read", None)}
    for p in SIX:
        o = options_of(job_text(p, JobOptions(("/tmp/x.dat",))), p.name)
        assert (o["rw"], o.get("rwmixread")) == want[p.name]
        assert o["bs"] == o["blockalign"] == str(p.block_size)
        assert o["iodepth"] == "16" and o["numjobs"] == "1"
    mw2 = options_of(job_text(SIX[1], JobOptions(("/tmp/x.dat",))), "MW2")
    assert mw2["rate_iops"] == "700,300"  # per direction, never one value (method-notes §9)
    assert mw2["time_based"] == "1" and mw2["runtime"] == "60000ms"
    assert "runtime" not in options_of(job_text(SIX[2], JobOptions(("/tmp/x",))), "RW")


def test_global_section_targets_engine_and_percentiles() -> None:
    text = job_text(SIX[0], JobOptions(("/tmp/a b.dat", "/dev/sdz")))
    g = options_of(text, "global")
    assert g["filename"] == "/tmp/a\\ b.dat:/dev/sdz" and g["group_reporting"] == "1"
    assert g["ioengine"] == default_ioengine() and g["allow_file_create"] == "0"
    assert g["percentile_list"] == "99:99.9:99.99:99.999" and g["direct"] == "1"
    assert default_ioengine("win32") == "windowsaio" and default_ioengine("linux") == "libaio"


def test_prefill_is_a_sequential_write_over_the_whole_target_without_time_base() -> None:
    pre = WorkloadProfile("PREFILL", 256 * KIB, 100, True, 256 * KIB, kind="prefill",
                          duration_s=5)
    o = options_of(job_text(pre, JobOptions(("/tmp/x",))), "PREFILL")
    assert o["rw"] == "write" and o["bs"] == str(256 * KIB) and "time_based" not in o
    assert o["runtime"] == "5000ms"  # only a cap: fio stops when the target is written once


def test_hot_band_is_one_section_per_stream_with_range_and_its_share_of_the_rate() -> None:
    text = job_text(replace(HOTBAND, rate_iops=(7000, 3000)), JobOptions(("/tmp/x",)))
    assert text.count("\n[HOTBAND-") == 13
    hot1 = options_of(text, "HOTBAND-hot1")
    # 28 % of 10,000 IOPS, split by the stream's own 70/30 mix (method-notes §2)
    assert (hot1["offset"], hot1["size"], hot1["rate_iops"]) == ("10%", "8%", "1960,840")
    assert hot1["rw"] == "randrw" and hot1["rwmixread"] == "70"
    assert "flow" not in text  # fio's flow weights throttle fio itself (docs/performance.md)
    assert options_of(text, "HOTBAND-sw0")["rw"] == "write"
    with pytest.raises(WorkloadError, match="needs a total rate_iops"):
        job_text(HOTBAND, JobOptions(("/tmp/x",)))
    with pytest.raises(WorkloadError, match="add up to 95"):
        job_text(WorkloadProfile("HB", 8192, 70, True, 8192, streams=HOT[1:],
                                 rate_iops=(70, 30)), JobOptions(("/tmp/x",)))
    with pytest.raises(WorkloadError, match="covers"):
        job_text(WorkloadProfile("HB", 8192, 70, True, 8192, rate_iops=(70, 30),
                                 streams=(("a", 95, 10, 100, 70, True, 8192),)),
                 JobOptions(("/tmp/x",)))


@pytest.mark.parametrize("bad", ["/tmp/x\nioengine=sync", "/tmp/a:b", "", "/tmp/x=1",
                                 "/tmp/x]\n[evil"])
def test_target_injection_is_refused(bad: str) -> None:
    with pytest.raises(WorkloadError, match="target"):
        job_text(SIX[0], JobOptions((bad,)))


@pytest.mark.parametrize("profile, match", [
    (WorkloadProfile("X", 1000, 0, False, 512), "multiple of 512"),
    (WorkloadProfile("X\nrw=write", 4096, 0, False, 4096), "profile name"),
    (WorkloadProfile("X", 4096, 101, False, 4096), "read percentage"),
    (WorkloadProfile("X", 4096, 50, False, 4096, queue_depth=0), "queue depth"),
    (WorkloadProfile("X", 4096, 50, False, 4096, rate_iops=(5000,)), "rate_iops"),  # type: ignore[arg-type]  # wrong on purpose
    (WorkloadProfile("X", 4096, 50, False, 4096, duration_s=-1), "duration"),
    (WorkloadProfile("X", 4096, float("nan"), False, 4096), "read percentage"),
])
def test_out_of_range_values_are_refused(profile: WorkloadProfile, match: str) -> None:
    with pytest.raises(WorkloadError, match=match):
        job_text(profile, JobOptions(("/tmp/x",)))
    with pytest.raises(WorkloadError, match="ioengine"):
        job_text(SIX[0], JobOptions(("/tmp/x",), ioengine="psync\nrw=write"))


@pytest.mark.process
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
@pytest.mark.parametrize("profile", [*SIX, replace(HOTBAND, rate_iops=(7000, 3000))],
                         ids=lambda p: p.name)
def test_fio_accepts_every_generated_job(tmp_path: Path, profile: WorkloadProfile) -> None:
    (tmp_path / "a.dat").write_bytes(b"\0" * (8 << 20))
    job = tmp_path / "job.fio"
    job.write_text(job_text(profile, opts(tmp_path)))
    done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
