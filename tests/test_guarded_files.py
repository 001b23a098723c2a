"""Every file a person names is read by one guarded reader (issue 40 §2): a FIFO, a link to
``/dev/zero``, a folder, a huge file and non-UTF-8 bytes each give one clear line naming the
file — never a hang, a MemoryError or a traceback.

Before: ``storwatt run --sut FIFO`` hung with nothing printed and ``--sut`` a link to
``/dev/zero`` read to MemoryError (the method loader alone had these guards, issue 25); the
trace, taxonomy, station-profile and ``db recover --journal`` readers had none either. Each
reader × each hostile file is one case; every call is bounded in time on a daemon thread
(``tests/support/bounded.py``), nothing asserts how long it took."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from app.method.loader import MAX_METHOD_BYTES, MethodError, load_method_file
from app.method.taxonomy import load_taxonomy_file
from app.station.instrument_profile import MAX_PROFILE_BYTES, StationProfile, StationProfileError
from app.station.device_file import (MAX_DEVICE_FILE_BYTES, DeviceFileError,
                                     load_device_file)
from app.station.sut_file import MAX_SUT_FILE_BYTES, SutFileError, load_sut_file
from app.storage.journal import JournalError, open_for_import, read_header
from drivers.fio.replay import MAX_TRACE_BYTES, read_trace
from drivers.guarded_file import GuardedFileError, read_text
from drivers.interfaces import WorkloadError
from tests.support.bounded import outcome_within
from tests.support.bundles import verifier_module
from ui.wizard.profiles import MAX_PROFILES_BYTES, ProfileStoreError, SutProfileStore

HOSTILE = ("fifo", "dev-zero", "folder", "huge", "not-utf8")


def _release(path: Path) -> None:
    """Let a reader stuck on the FIFO's open go (only needed before the fix)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def hostile_file(folder: Path, kind: str, limit: int, name: str = "named.file") -> Path:
    """A file of ``kind`` at ``folder/name`` (a FIFO, a link to /dev/zero, a folder, a sparse
    file one byte past ``limit``, or bytes that are no UTF-8)."""
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero on this system")
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as fh:  # sparse: the bound is what is checked, not the disk
            fh.truncate(limit + 1)
    else:
        path.write_bytes(b"\xff\xfe\x00bad \xc3\x28 text\n")
    return path


def _assert_one_line(exc: BaseException | None, error: type[BaseException], path: Path,
                     kind: str) -> None:
    assert isinstance(exc, error), f"{kind}: {exc!r}"
    text = str(exc)
    assert "\n" not in text and str(path) in text, text
    expected = {"fifo": "not a regular file but a pipe", "dev-zero": "not a regular file",
                "folder": "not a regular file but a folder", "huge": "larger than",
                "not-utf8": "not UTF-8 text"}[kind]
    assert expected in text, text


def _profile(path: Path) -> object:
    return StationProfile(path).load()


def _trace(path: Path) -> object:
    return read_trace(str(path))


def _taxonomy(path: Path) -> object:
    load_taxonomy_file.cache_clear()
    return load_taxonomy_file(path)


READERS: dict[str, tuple[Callable[[Path], object], type[BaseException], int]] = {
    "method": (load_method_file, MethodError, MAX_METHOD_BYTES),
    "taxonomy": (_taxonomy, MethodError, MAX_METHOD_BYTES),
    "sut": (load_sut_file, SutFileError, MAX_SUT_FILE_BYTES),
    "trace": (_trace, WorkloadError, MAX_TRACE_BYTES),
    "station-profile": (_profile, StationProfileError, MAX_PROFILE_BYTES),
    "sut-profiles": (lambda path: SutProfileStore(path).load_all(), ProfileStoreError,
                     MAX_PROFILES_BYTES),
    "device-file": (load_device_file, DeviceFileError, MAX_DEVICE_FILE_BYTES),
}


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_refuses_each_hostile_file_in_one_line(tmp_path: Path, reader: str,
                                                          kind: str) -> None:
    read, error, limit = READERS[reader]
    path = hostile_file(tmp_path, kind, limit)
    try:
        exc = outcome_within(lambda: read(path), f"the {reader} reader on a {kind}")
    finally:
        if kind == "fifo":
            _release(path)
    _assert_one_line(exc, error, path, kind)


@pytest.mark.parametrize("kind", ("fifo", "dev-zero", "folder"))
def test_a_named_run_journal_is_refused_unless_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = hostile_file(tmp_path, kind, 0, "run.journal")
    for what, read in (("header", read_header), ("import", open_for_import)):
        try:
            exc = outcome_within(lambda read=read: read(path),  # type: ignore[misc]  # the loop's reader bound as a default
                                 f"the journal {what} on a {kind}")
        finally:
            if kind == "fifo":
                _release(path)
        if kind == "folder" and what == "import" and isinstance(exc, IsADirectoryError):
            continue  # opened for writing, a folder is refused by the system itself
        assert isinstance(exc, JournalError) and "not a regular file" in str(exc), repr(exc)


@pytest.mark.parametrize("kind", HOSTILE)
def test_the_verifier_refuses_each_hostile_bundle_in_one_line(tmp_path: Path,
                                                             kind: str) -> None:
    verifier = verifier_module()
    path = hostile_file(tmp_path, kind, 8 << 20, "bundle.zip")
    try:
        exc = outcome_within(lambda: verifier.read_bundle(str(path)), f"the verifier on a {kind}")
    finally:
        if kind == "fifo":
            _release(path)
    assert isinstance(exc, verifier.BundleError), repr(exc)
    assert "\n" not in str(exc) and str(path) in str(exc), str(exc)


def test_the_limit_is_named_in_people_units(tmp_path: Path) -> None:
    path = hostile_file(tmp_path, "huge", 64 << 10)
    with pytest.raises(GuardedFileError, match=r"larger than 64 KiB, the most a note can be"):
        read_text(path, "note", 64 << 10)
    path.write_text("fits")
    assert read_text(path, "note", 64 << 10) == "fits"


@pytest.mark.parametrize("kind", ("fifo", "dev-zero"))
def test_storwatt_run_with_a_hostile_sut_file_says_so_in_one_line(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = hostile_file(tmp_path, kind, MAX_SUT_FILE_BYTES, "sut.json")
    codes: list[int] = []
    try:
        exc = outcome_within(lambda: codes.append(main(["run", "--method", "smoke", "--lab",
                                                        "sim", "--sut", str(path)])),
                             f"storwatt run --sut {kind}")
    finally:
        if kind == "fifo":
            _release(path)
    assert exc is None and codes and codes[0] != 0, (exc, codes)
    err = capsys.readouterr().err
    assert "not a regular file" in err and str(path) in err and "Traceback" not in err, err


@pytest.mark.parametrize("kind", ("fifo", "dev-zero", "folder"))
def test_a_station_settings_file_that_is_no_file_leaves_the_defaults(kind: str) -> None:
    """``station.json`` in the data folder is read at every run's start; on main a FIFO there
    hung every command that names the station. Its policy is unchanged: what cannot be read
    leaves the defaults (the host name)."""
    from app.core.station_settings import configured_name, station_file

    path = station_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    hostile_file(path.parent, kind, 0, path.name)
    try:
        exc = outcome_within(configured_name, f"the station name with station.json a {kind}")
    finally:
        if kind == "fifo":
            _release(path)
    assert exc is None
    assert configured_name() == ""
