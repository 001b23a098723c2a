"""`storwatt run --lab local-fio` never destroys a file it did not create (issue 12, part 1).

Each run here is refused or fails before it could measure anything; the refused ones must leave
the target and the station's database byte-identical and create nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import tempfile
import threading
from pathlib import Path

import pytest

from app.cli.cmd_run import config_from_args
from app.cli.main import build_parser, main
from app.station.session import open_session
from app.storage.opening import open_database
from drivers.interfaces import WorkloadError

pytestmark = pytest.mark.fio
RUN = ["run", "--lab", "local-fio", "--method", "smoke", "--taxonomy", "online-2",
       "--capacity-gb", "0.016", "--supply", "1P-200-240", "--ashrae-class", "A2",
       "--drives", "1", "--raid", "JBOD", "--vendor", "Acme", "--model", "M1", "--serial", "S1"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_existing_file_is_left_byte_identical(tmp_path: Path, capsys) -> None:
    notes = tmp_path / "some-existing-file.txt"
    notes.write_text("a lab's only copy of its notes\n" * 100)
    before = digest(notes)
    assert main([*RUN, "--target", str(notes), "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    assert digest(notes) == before
    err = capsys.readouterr().err
    assert f"type the path ({notes}) to confirm" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("x.db")) == \
        ["some-existing-file.txt"]


def test_the_station_database_is_never_a_target(tmp_path: Path, capsys) -> None:
    db = tmp_path / "station.db"
    open_database(f"sqlite:///{db}").close()
    before = digest(db)
    for target in (db, Path(str(db) + "-wal")):
        code = main([*RUN, "--target", str(target), "--target-size", "1M", "--confirm-device",
                     str(target), "--db", f"sqlite:///{db}"])
        assert digest(db) == before
        assert code == 1 and "belongs to the station" in capsys.readouterr().err


def test_a_missing_target_without_a_size_is_refused_and_not_created(tmp_path: Path,
                                                                     capsys) -> None:
    target = tmp_path / "sdq"  # as a mistyped device name would be
    assert main([*RUN, "--target", str(target), "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    assert "give a scratch size to create one on purpose (--target-size)" in \
        capsys.readouterr().err
    assert not target.exists()


def test_the_report_folder_is_never_a_target(tmp_path: Path, capsys) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    code = main([*RUN, "--target", str(out / "scratch.dat"), "--target-size", "1M",
                 "--out", str(out), "--db", f"sqlite:///{tmp_path / 'x.db'}"])
    assert code == 1 and f"belongs to the station ({out}" in capsys.readouterr().err
    assert not list(out.iterdir())


def test_a_typed_path_accepts_an_existing_file(tmp_path: Path) -> None:
    old = tmp_path / "old-scratch.bin"
    old.write_bytes(b"\0" * (1 << 20))
    db = f"sqlite:///{tmp_path / 'x.db'}"
    args = [*RUN, "--target", str(old), "--db", db]
    threads = set(threading.enumerate())
    with pytest.raises(WorkloadError, match="type the path"):
        open_session(config_from_args(build_parser().parse_args(args)), db_url=db)
    assert set(threading.enumerate()) <= threads  # the refused session left no writer running
    for flag in ("--confirm-target", "--confirm-device"):  # the old name keeps working
        config = config_from_args(build_parser().parse_args([*args, flag, str(old)]))
        assert config.confirm_device == str(old) and config.target_size == ""
        open_session(config, db_url=db).close()  # the lab accepted the target


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_job_folders_are_removed_after_a_failing_run(tmp_path: Path, monkeypatch,
                                                     capsys) -> None:
    real = shutil.which("fio")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "fio"  # parses like fio, then fails the first phase
    fake.write_text(f"""#!/bin/sh
case "$1" in
  --version) echo fio-3.33;;
  --enghelp=*) exit 0;;
  --parse-only) exec {real} "$@";;
  *) for a; do last="$a"; done; echo "$last" >> {tmp_path / 'jobs.log'}
     echo "fio: io_u error on file: Input/output error" >&2; exit 3;;
esac
""")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(real).parent}")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    code = main([*RUN, "--target", str(tmp_path / "scratch.dat"), "--target-size", "1M",
                 "--db", f"sqlite:///{tmp_path / 'x.db'}", "--quiet"])
    assert code == 1 and "fio exited with code 3" in capsys.readouterr().out
    job = Path((tmp_path / "jobs.log").read_text().splitlines()[0])
    assert job.parent.name.startswith("storwatt-fio-") and job.parent.parent == temp
    assert not list(temp.iterdir())  # the job folder went with the run
