"""Target safety: never write to a mounted, in-use or system disk, never let fio invent a file.

Block-device verdicts run on a fake /proc/mounts and a fake /sys/block tree: no real device is
opened by these tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.fio.safety import (block_check, check_target, check_targets, create_scratch_file,
                                describe, read_mounts)

MOUNTS = """\
/dev/sda2 / ext4 rw,relatime 0 0
proc /proc proc rw 0 0
/dev/sdb1 /srv/data xfs rw 0 0
tmpfs /run tmpfs rw 0 0
"""


@pytest.fixture
def fake_sys(tmp_path: Path) -> tuple[dict[str, str], str]:
    sys_block = tmp_path / "sys" / "block"
    for disk, parts in {"sda": ["sda1", "sda2"], "sdb": ["sdb1"], "sdc": ["sdc1"]}.items():
        for part in parts:
            (sys_block / disk / part).mkdir(parents=True)
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS)
    return read_mounts(str(mounts)), str(sys_block)


def verdict(dev: str, fake_sys, **kw):
    mounts, sys_block = fake_sys
    args = dict(writing=True, confirm_device=dev, allow_destructive=True) | kw
    return block_check(dev, dev, 1 << 30, mounts=mounts, sys_block=sys_block, **args)


def test_mount_table_keeps_only_device_sources(fake_sys) -> None:
    mounts, _ = fake_sys
    assert mounts == {"/dev/sda2": "/", "/dev/sdb1": "/srv/data"}


def test_system_disk_and_its_partitions_are_refused(fake_sys) -> None:
    for dev in ("/dev/sda", "/dev/sda1"):
        check = verdict(dev, fake_sys)
        assert not check.ok and check.is_system and "system disk" in check.reason


def test_mounted_partition_and_the_disk_holding_it_are_refused(fake_sys) -> None:
    part = verdict("/dev/sdb1", fake_sys)
    assert not part.ok and part.mounted_at == "/srv/data" and "mounted at /srv/data" in part.reason
    disk = verdict("/dev/sdb", fake_sys)
    assert not disk.ok and "holds mounted partitions (/srv/data)" in disk.reason


def test_a_free_disk_needs_the_station_setting_and_its_typed_name(fake_sys) -> None:
    assert verdict("/dev/sdc", fake_sys).ok
    assert verdict("/dev/sdc", fake_sys).reason == "block device, confirmed"
    assert "type the device name (/dev/sdc)" in verdict("/dev/sdc", fake_sys,
                                                         confirm_device="sdc").reason
    assert "not enabled" in verdict("/dev/sdc", fake_sys, allow_destructive=False).reason
    assert verdict("/dev/sdc", fake_sys, writing=False, confirm_device="").ok  # read-only


def test_missing_targets_are_refused_unless_a_scratch_size_is_given(tmp_path: Path) -> None:
    missing = str(tmp_path / "typo.dat")
    check = check_target(missing, writing=True)
    assert not check.ok and check.kind == "missing" and "silently create" in check.reason
    planned = check_target(missing, writing=True, create_size=1 << 20)
    assert planned.ok and describe(planned) == f"{missing} (scratch file to create, 1 MiB)"
    create_scratch_file(missing, 1 << 20)
    made = check_target(missing, writing=True)
    assert made.ok and made.kind == "file" and describe(made) == f"{missing} (file, 1 MiB)"
    assert check_target("/dev/null", writing=True).kind == "other"
    assert [c.ok for c in check_targets([missing, str(tmp_path / "x")], writing=True)] == \
        [True, False]

