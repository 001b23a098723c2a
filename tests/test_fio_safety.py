"""Target safety: never write to a mounted, in-use or system disk, never let fio invent a file,
never a file the station did not create unless its path was typed, never a system or station path.

Block-device verdicts run on a fake /proc/mounts and a fake /sys/block tree, /dev rules on a
/dev-like folder and Windows rules on injected facts: no real device is opened, nothing is
created in /dev by these tests.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.safety import (HostFacts, TargetCheck, TargetPolicy, block_check, check_target,
                                check_targets, create_scratch_file, describe, read_mounts)
from drivers.fio.windows_api import gather_windows_facts
from drivers.fio.windows_facts import PhysicalDrive, WindowsFacts, parse_disk_extents
from drivers.interfaces import WorkloadProfile

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


def verdict(dev: str, fake_sys, writing: bool = True, confirm: str | None = None,
            allow_destructive: bool = True):
    mounts, sys_block = fake_sys
    policy = TargetPolicy(confirmed=(dev if confirm is None else confirm,),
                          allow_destructive=allow_destructive)
    return block_check(dev, dev, 1 << 30, mounts=mounts, sys_block=sys_block, writing=writing,
                       policy=policy)


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
                                                         confirm="sdc").reason
    assert "not enabled" in verdict("/dev/sdc", fake_sys, allow_destructive=False).reason
    assert verdict("/dev/sdc", fake_sys, writing=False, confirm="").ok  # read-only


def test_missing_targets_are_refused_unless_a_scratch_size_is_given(tmp_path: Path) -> None:
    missing = str(tmp_path / "typo.dat")
    check = check_target(missing, writing=True)
    assert not check.ok and check.kind == "missing" and "silently create" in check.reason
    planned = check_target(missing, writing=True, policy=TargetPolicy(create_size=1 << 20))
    assert planned.ok and describe(planned) == f"{missing} (scratch file to create, 1 MiB)"
    assert not Path(missing).exists()  # a check never creates anything
    create_scratch_file(missing, 1 << 20)
    made = check_target(missing, writing=True)
    assert made.ok and made.kind == "scratch"
    assert describe(made) == f"{missing} (scratch file, 1 MiB)"
    null = check_target("/dev/null", writing=True)
    assert null.kind == "other" and not null.ok
    assert [c.ok for c in check_targets([missing, str(tmp_path / "x")], writing=True)] == \
        [True, False]



# --- issue 12: never a file the station did not create, never a system or station path ----------

MiB = 1 << 20


def test_system_folders_are_refused_even_when_typed_to_confirm(tmp_path: Path) -> None:
    link = tmp_path / "innocent.dat"
    link.symlink_to("/etc/passwd")  # the rule holds for the resolved path
    for path, root in (("/etc/passwd", "/etc"), ("/proc/sys/vm/drop_caches", "/proc"),
                       ("/sys/kernel/storwatt-test", "/sys"), ("/boot/storwatt.img", "/boot"),
                       ("/usr/lib/storwatt.dat", "/usr"), (str(link), "/etc")):
        policy = TargetPolicy(confirmed=(path,), create_size=64 * MiB)
        check = check_target(path, writing=True, policy=policy)
        assert not check.ok and f"is under {root} (a system folder)" in check.reason, check
    assert not Path("/sys/kernel/storwatt-test").exists()


def test_under_dev_only_an_existing_block_device(tmp_path: Path) -> None:
    dev = tmp_path / "dev"  # a /dev-like folder: nothing is ever made in the real /dev
    dev.mkdir()
    (dev / "stray").write_bytes(b"x")
    facts = HostFacts(dev_root=str(dev))
    policy = TargetPolicy(confirmed=(str(dev / "stray"),), create_size=64 * MiB)
    missing = check_target(str(dev / "sdq"), writing=True, policy=policy, facts=facts)
    assert not missing.ok and missing.kind == "missing"
    assert f"is under {dev} but is not an existing block device" in missing.reason
    stray = check_target(str(dev / "stray"), writing=True, policy=policy, facts=facts)
    assert not stray.ok and "not an existing block device" in stray.reason
    assert sorted(p.name for p in dev.iterdir()) == ["stray"]
    real = check_target("/dev/storwatt-no-such-disk", writing=True,
                        policy=TargetPolicy(create_size=64 * MiB))
    assert not real.ok and "is under /dev but is not an existing block device" in real.reason


def test_an_existing_file_is_refused_unless_its_path_is_typed(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("a lab's notes")
    refused = check_target(str(notes), writing=True, policy=TargetPolicy(create_size=64 * MiB))
    assert not refused.ok and refused.kind == "file"
    assert "no notes.txt.storwatt beside it: the station did not create it" in refused.reason
    assert f"type the path ({notes}) to confirm" in refused.reason
    typed = check_target(str(notes), writing=True, policy=TargetPolicy(confirmed=(str(notes),)))
    assert typed.ok and "confirmed" in typed.reason
    other = check_target(str(notes), writing=True, policy=TargetPolicy(confirmed=("notes.txt",)))
    assert not other.ok  # the path exactly as given as the target
    assert check_target(str(notes), writing=False).ok  # reading destroys nothing


def test_a_scratch_file_is_recognised_by_its_sidecar(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch.dat"
    record = create_scratch_file(str(scratch), 2 * MiB)
    st = scratch.stat()
    assert (record.device, record.inode, record.size) == (st.st_dev, st.st_ino, 2 * MiB)
    for size in (None, 2 * MiB):  # the second run, with or without the same size
        again = check_target(str(scratch), writing=True, policy=TargetPolicy(create_size=size))
        assert again.ok and again.kind == "scratch"
    resized = check_target(str(scratch), writing=True, policy=TargetPolicy(create_size=4 * MiB))
    assert not resized.ok
    assert "has 2,097,152 bytes but the scratch size asks 4,194,304" in resized.reason  # grouped
    with scratch.open("ab") as fh:
        fh.write(b"more")
    grown = check_target(str(scratch), writing=True)
    assert not grown.ok and "it was changed since the station created it" in grown.reason
    other = tmp_path / "other.dat"
    other.write_bytes(b"someone else's file".ljust(2 * MiB, b"."))
    other.replace(scratch)  # same name and size, another file (another inode)
    replaced = check_target(str(scratch), writing=True)
    assert not replaced.ok and "it was replaced" in replaced.reason
    with pytest.raises(FileExistsError):  # creation never overwrites
        create_scratch_file(str(scratch), MiB)
    assert scratch.read_bytes().startswith(b"someone else's file")


def test_a_foreign_sidecar_name_blocks_creation(tmp_path: Path) -> None:
    (tmp_path / "x.dat.storwatt").write_text("my own notes")
    check = check_target(str(tmp_path / "x.dat"), writing=True,
                         policy=TargetPolicy(create_size=MiB))
    assert not check.ok and "is not a StorWatt sidecar" in check.reason


def test_a_scratch_file_needs_an_existing_folder(tmp_path: Path) -> None:
    target = tmp_path / "new" / "scratch.dat"
    check = check_target(str(target), writing=True, policy=TargetPolicy(create_size=MiB))
    assert not check.ok and f"its folder {tmp_path / 'new'} does not exist" in check.reason
    assert not (tmp_path / "new").exists()


def test_protected_station_paths_are_never_targets(tmp_path: Path) -> None:
    db = tmp_path / "station.db"
    db.write_bytes(b"SQLite format 3\0")
    data = tmp_path / "data"
    data.mkdir()
    alias = tmp_path / "alias.db"
    alias.symlink_to(db)
    protected = (str(db), str(db) + "-wal", str(data))
    for path in (db, alias, Path(str(db) + "-wal"), data / "scratch.dat"):
        policy = TargetPolicy(protected=protected, confirmed=(str(path),), create_size=MiB)
        check = check_target(str(path), writing=True, policy=policy)
        assert not check.ok and "belongs to the station" in check.reason, check
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias.db", "data", "station.db"]
    assert not list(data.iterdir())


# --- Windows: the same rules from injected platform facts --------------------------------------

WIN = WindowsFacts(system_drive="C:", volumes_in_use=frozenset({"C:", "D:"}),
                   drives=(PhysicalDrive(0, 500 << 30, frozenset({"C:"})),
                           PhysicalDrive(1, 1 << 40, frozenset({"D:"})),
                           PhysicalDrive(2, 2 << 40, frozenset())))


def win_check(path: str, confirm: str = "") -> TargetCheck:
    return check_target(path, writing=True, policy=TargetPolicy(confirmed=(confirm,)),
                        facts=HostFacts(windows=WIN))


def test_windows_physical_drives_follow_the_block_device_rules() -> None:
    system = win_check(r"\\.\PhysicalDrive0", r"\\.\PhysicalDrive0")
    assert not system.ok and system.is_system and "system disk (holds C:)" in system.reason
    busy = win_check(r"\\.\PhysicalDrive1", r"\\.\PhysicalDrive1")
    assert not busy.ok and "holds volumes in use (D:)" in busy.reason
    free = win_check(r"\\.\PhysicalDrive2")
    assert not free.ok and r"type the device name (\\.\PhysicalDrive2)" in free.reason
    confirmed = win_check(r"\\.\PhysicalDrive2", r"\\.\PhysicalDrive2")
    assert confirmed.ok and confirmed.kind == "block" and confirmed.size_bytes == 2 << 40
    absent = win_check(r"\\.\PhysicalDrive7", r"\\.\PhysicalDrive7")
    assert not absent.ok and "no such physical drive on this station (present: 0, 1, 2)" \
        in absent.reason
    job = job_text(WorkloadProfile("RR", 4096, 100, True, 4096, duration_s=1),
                   JobOptions((r"\\.\PhysicalDrive2",), "windowsaio"))
    assert "filename=\\\\.\\PhysicalDrive2\n" in job


def test_windows_volumes_and_drive_letter_paths_are_refused() -> None:
    assert "C: is the system volume" in win_check("C:", "C:").reason
    assert "volume D: is in use" in win_check(r"\\.\D:", r"\\.\D:").reason
    assert "raw volumes are not fio targets" in win_check("E:\\", "E:\\").reason
    letter = win_check(r"E:\scratch.dat", r"E:\scratch.dat")
    assert not letter.ok and "no drive letters" in letter.reason and "relative" in letter.reason
    assert "network shares" in win_check(r"\\server\share\x.dat").reason


def test_volume_disk_extents_reply_is_parsed() -> None:
    raw = struct.pack("<I4x", 2) + struct.pack("<I4xqq", 3, 0, 1 << 30) \
        + struct.pack("<I4xqq", 5, 0, 1 << 30)
    assert parse_disk_extents(raw) == {3, 5}
    assert parse_disk_extents(b"") == frozenset()
    assert gather_windows_facts().drives == () or sys.platform.startswith("win")


def test_a_name_too_long_for_its_sidecar_is_refused_not_a_traceback(tmp_path) -> None:
    """The station records a scratch file in ``<file>.storwatt``: a name that fits the file
    system but not with that suffix is refused with the reason (found by the CLI fuzzer)."""
    name = "x" * 250  # fits 255, but not with ".storwatt"
    check = check_target(str(tmp_path / name), writing=True,
                         policy=TargetPolicy(create_size=1 << 20))
    assert not check.ok and "too long" in check.reason
    assert not (tmp_path / name).exists()


def test_a_missing_target_tells_both_the_wizard_and_the_cli_user_and_groups_bytes(
        tmp_path) -> None:
    """Issue 28: a GUI user was told to use "--target-size"; byte counts were ungrouped. The
    driver names no front end: the wizard shows it beside its Scratch file size field, the
    command line adds its option (tests/test_cli_target_safety.py)."""
    from drivers.fio.safety import GIVE_A_SIZE, MIN_SCRATCH_BYTES, TargetPolicy, check_target

    missing = check_target(str(tmp_path / "new.dat"), writing=True, policy=TargetPolicy())
    assert GIVE_A_SIZE in missing.reason and "--target-size" not in missing.reason
    small = check_target(str(tmp_path / "new.dat"), writing=True,
                         policy=TargetPolicy(create_size=1000))
    assert f"{MIN_SCRATCH_BYTES:,}" in small.reason and "1,000 bytes" in small.reason


def test_a_target_with_a_nul_character_is_refused_not_a_crash(tmp_path) -> None:
    """Found by the wizard's fuzz test: os.stat raised "embedded null byte" out of the check."""
    from drivers.fio.safety import TargetPolicy, check_target

    check = check_target(f"{tmp_path}/a\x00b", writing=True, policy=TargetPolicy(create_size=2**20))
    assert not check.ok and "NUL character" in check.reason
