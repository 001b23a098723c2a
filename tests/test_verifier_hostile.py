"""A verifier no bundle can crash, hang or exhaust (issue 37, "hostile bundles").

An auditor runs ``storwatt-verify`` on whatever file they were handed. Each hostile input below
must end in exit status 2 (the bundle could not be judged — never 1, the status of a verdict)
with one line naming the member and the field, no traceback, nothing written anywhere, and no
more bytes taken from any member than the bundle's own manifest allows it (plus the reader's
slack): the bytes are counted here at the zip layer, beneath the verifier, not by the verifier's
own bookkeeping. The same matrix runs once more in the auditor's bare interpreter (``-I -S``)
under a memory ceiling, so a case that only "works" by exhausting memory is caught too.

The cases are the ones the issue saw crash or hang, the ones it saw held, and the hostile
shapes an attacker would try next (a member larger than its manifest allows, a member twice,
one declared but absent, JSON that is not UTF-8, NaN and infinities, numbers too big for a
float, a directory as the path)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.reports.bundle import _rows
from tests.support.bundles import VERIFIER, bundle_of, read_files, verifier_module, verify
from tests.support.hostile_bundles import bomb_zip
from tests.support.recorded_runs import record_run
from tests.support.time_budget import budget_s

GIB = 1 << 30
#: the auditor's interpreter gets this much address space: ample for an honest smoke bundle,
#: far below what any of the issue's bombs took (2.1 GB RSS, 3 GB)
MEMORY_CEILING = 512 << 20


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> dict[str, bytes]:
    """The files of an honest storwatt-bundle/2 (a smoke run on the fake clock)."""
    folder = tmp_path_factory.mktemp("hostile")
    recorded = record_run(folder / "run.db", method="smoke")
    bundle = bundle_of(recorded.database, recorded.run_id, folder / "smoke.zip")
    assert verify(bundle)[0] == 0
    return read_files(bundle)


Members = list[tuple[Any, bytes]]


def _manifest_for(files: dict[str, bytes], changed: dict[str, bytes]) -> bytes:
    """The manifest rewritten as a careful forger would for ``changed`` files."""
    manifest = json.loads(files["manifest.json"])
    for name, data in changed.items():
        manifest["files"][name] = hashlib.sha256(data).hexdigest()
        manifest["sizes"][name] = len(data)
        manifest["rows"][name] = _rows(name, data)
    return json.dumps(manifest, sort_keys=True).encode()


def _members(files: dict[str, bytes], forge: bool = True, **changed: bytes) -> Members:
    """The honest members with ``changed`` ones (``events_jsonl`` names events.jsonl) put in;
    the manifest rewritten to match when ``forge``."""
    named = {key.replace("_json", ".json").replace("_csv", ".csv"): data
             for key, data in changed.items()}
    out = dict(files) | named
    if forge and "manifest.json" not in named:
        out["manifest.json"] = _manifest_for(files, named)
    return list(out.items())


def _write_zip(path: Path, members: Members) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def _newline_bomb(path: Path, files: dict[str, bytes], name: str, size: int,
                  declared: bool = False, line: bytes = b"\n") -> Path:
    """The honest bundle with ``name`` replaced by 4 GiB of ``line`` repeated; its manifest
    declaring them too when ``declared`` (the size, and as many rows as it may take)."""
    manifest = json.loads(files["manifest.json"])
    if declared:
        manifest["sizes"][name] = size
        manifest["rows"][name] = size // verifier_module().ROW_BYTES[name]
    return bomb_zip(path, files, name, size, manifest, line)


def _symlink(name: str, target: bytes) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _truncated(path: Path, files: dict[str, bytes]) -> Path:
    whole = _write_zip(path, list(files.items())).read_bytes()
    path.write_bytes(whole[: len(whole) * 2 // 3])
    return path


def _header_only(data: bytes, drop: str) -> bytes:
    """A CSV without column ``drop`` (header and cells)."""
    lines = data.decode().splitlines()
    at = lines[0].split(",").index(drop)
    return "".join(",".join(c for i, c in enumerate(line.split(",")) if i != at) + "\n"
                   for line in lines).encode()


Case = Callable[[Path, dict[str, bytes]], Path]


def _zip_of(**changed: bytes) -> Case:
    return lambda path, files: _write_zip(path, _members(files, **changed))


def _unforged(**changed: bytes) -> Case:
    return lambda path, files: _write_zip(path, _members(files, forge=False, **changed))


def _events_padded(path: Path, files: dict[str, bytes]) -> Path:
    """events.jsonl grown past what its (unchanged) manifest declares, within the row bound."""
    grown = files["events.jsonl"] + b" " * (1 << 20) + b"\n"
    return _write_zip(path, _members(files, forge=False, events_jsonl=grown))


def _lines_beyond_rows(path: Path, files: dict[str, bytes]) -> Path:
    """events.jsonl with 200,000 lines more than its manifest's rows, its size and SHA-256
    declared (within what the rows may take): cheap to store, long to walk."""
    grown = files["events.jsonl"] + b"{}\n" * 200_000
    manifest = json.loads(_manifest_for(files, {"events.jsonl": grown}))
    manifest["rows"]["events.jsonl"] = _rows("events.jsonl", files["events.jsonl"])
    members = _members(files, forge=False, events_jsonl=grown)
    return _write_zip(path, [(n, json.dumps(manifest).encode() if n == "manifest.json" else d)
                             for n, d in members])


def _duplicate(path: Path, files: dict[str, bytes]) -> Path:
    members = list(files.items()) + [("run.json", b"{}")]
    with pytest.warns(UserWarning, match="Duplicate name"):
        return _write_zip(path, members)


def _absent(path: Path, files: dict[str, bytes]) -> Path:
    return _write_zip(path, [(n, d) for n, d in files.items() if n != "inlet_temperature.csv"])


CASES: dict[str, tuple[Case, tuple[str, ...]]] = {
    # seen crashing or hanging (issue 37, "What was seen" 3)
    "4 GiB of newlines as events.jsonl": (
        lambda p, f: _newline_bomb(p, f, "events.jsonl", 4 * GIB),
        ("events.jsonl", "4294967296 bytes")),
    "4 GiB of newlines declared by its manifest": (
        lambda p, f: _newline_bomb(p, f, "events.jsonl", 4 * GIB, declared=True),
        ("events.jsonl line 1", "empty")),
    "4 GiB of {} lines declared by its manifest": (
        lambda p, f: _newline_bomb(p, f, "events.jsonl", 4 * GIB, declared=True,
                                      line=b"{}\n"),
        ("events.jsonl", "rows")),
    "manifest.json is [1,2,3]": (_zip_of(manifest_json=b"[1,2,3]"),
                                 ("manifest.json", "must be an object")),
    "run.json is {}": (_zip_of(run_json=b"{}"), ("run.json", "'run' missing")),
    "a 100,000-deep JSON array": (_zip_of(method_json=_deep(100_000)),
                                  ("method.json", "nested deeper")),
    "a CSV without its columns": (
        lambda p, f: _write_zip(p, _members(f, power_samples_csv=_header_only(
            f["power_samples.csv"], "interval"))),
        ("power_samples.csv", "'interval' missing")),
    # seen held
    "a zip-slip name": (lambda p, f: _write_zip(p, [*f.items(), ("../../evil.json", b"{}")]),
                        ("../../evil.json", "name")),
    "an absolute name": (lambda p, f: _write_zip(p, [*f.items(), ("/tmp/evil.json", b"{}")]),
                         ("/tmp/evil.json", "name")),
    "a symlink member": (lambda p, f: _write_zip(p, [
        *((n, d) for n, d in f.items() if n != "method.json"),
        _symlink("method.json", b"/etc/passwd")]), ("method.json", "link")),
    "a truncated zip": (lambda p, f: _truncated(p, f), ("cannot read",)),
    # our own
    "a member larger than its manifest allows": (_events_padded, ("events.jsonl", "bytes")),
    "more lines than its manifest's rows": (_lines_beyond_rows, ("events.jsonl", "lines")),
    "a member twice": (_duplicate, ("run.json", "twice")),
    "a member of the format absent": (_absent, ("inlet_temperature.csv",)),
    "a member declared in files but absent": (
        lambda p, f: _write_zip(p, [*((n, d) for n, d in f.items() if n != "manifest.json"),
                                    ("manifest.json", _declaring(f, "notes.txt"))]),
        ("manifest.json", "files.notes.txt")),
    "JSON that is not UTF-8": (_zip_of(run_json="{\"run\": \"é\"}".encode("latin-1")),
                               ("run.json", "not JSON")),
    "NaN in JSON": (_zip_of(manifest_json=b'{"format": NaN}'), ("manifest.json", "NaN")),
    "Infinity in a JSON line": (
        lambda p, f: _write_zip(p, _members(f, intervals_jsonl=f["intervals.jsonl"].replace(
            b'"avg_power_w":', b'"avg_power_w":Infinity,"x":', 1))),
        ("intervals.jsonl line 1", "Infinity")),
    "a number too big for a float": (
        lambda p, f: _write_zip(p, _members(f, metrics_jsonl=f["metrics.jsonl"].replace(
            b'"run_length_s":', b'"run_length_s":1' + b"0" * 400 + b',"x":', 1))),
        ("metrics.jsonl line 1", "run_length_s")),
    "an integer of 100,000 digits": (
        lambda p, f: _write_zip(p, _members(f, attempts_jsonl=f["attempts.jsonl"].replace(
            b'"attempt":1', b'"attempt":' + b"9" * 100_000, 1))),
        ("attempts.jsonl",)),
    "a CSV cell too big for a float": (
        lambda p, f: _write_zip(p, _members(
            f, power_samples_csv=_big_cell(f["power_samples.csv"]))),
        ("power_samples.csv row 1", "t_s")),
    "a CSV time that is no number": (
        lambda p, f: _write_zip(p, _members(
            f, power_samples_csv=_big_cell(f["power_samples.csv"], "nan"))),
        ("power_samples.csv row 1", "t_s")),
    "a manifest declaring a negative size": (
        lambda p, f: _write_zip(p, [*((n, d) for n, d in f.items() if n != "manifest.json"),
                                      ("manifest.json", _manifest_with(f, sizes=-1))]),
        ("manifest.json", "sizes.")),
}
SPECIAL: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "/dev/zero as the bundle": (lambda tmp: Path("/dev/zero"), ("/dev/zero", "regular file")),
    "a FIFO named x.zip": (lambda tmp: (os.mkfifo(tmp / "x.zip"), tmp / "x.zip")[1],
                           ("x.zip", "regular file")),
    "a directory as the path": (lambda tmp: (tmp / "dir.zip").mkdir() or tmp / "dir.zip",
                                ("dir.zip", "regular file")),
    "no file at the path": (lambda tmp: tmp / "absent.zip", ("absent.zip",)),
}


def _big_cell(data: bytes, value: str = "1" + "0" * 400) -> bytes:
    """power_samples.csv with the first row's t_s ``value`` (by default a number no float
    holds)."""
    lines = data.split(b"\n")
    header = lines[0].decode().split(",")
    cells = lines[1].decode().split(",")
    cells[header.index("t_s")] = value
    lines[1] = ",".join(cells).encode()
    return b"\n".join(lines)


def _declaring(files: dict[str, bytes], name: str) -> bytes:
    manifest = json.loads(files["manifest.json"])
    manifest["files"][name] = hashlib.sha256(b"").hexdigest()
    return json.dumps(manifest).encode()


def _manifest_with(files: dict[str, bytes], sizes: int) -> bytes:
    manifest = json.loads(files["manifest.json"])
    manifest["sizes"]["events.jsonl"] = sizes
    return json.dumps(manifest).encode()


class _Counted:
    """A zip member's decompressed stream, counting what the verifier takes from it."""

    def __init__(self, raw: Any, name: str, taken: dict[str, int]) -> None:
        self.raw, self.name, self.taken = raw, name, taken
        taken.setdefault(name, 0)

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.taken[self.name] += len(data)
        return data

    def __getattr__(self, attribute: str) -> Any:
        if attribute in ("readinto", "readline", "read1", "peek", "readlines", "__iter__"):
            raise AssertionError(f"the verifier reads a member by {attribute}: count it here")
        return getattr(self.raw, attribute)

    def __enter__(self) -> "_Counted":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.raw.close()


def _allowed(bundle: Path, name: str) -> int:
    """The most bytes of member ``name`` the bundle's own manifest lets a reader take: a
    whole-JSON member its fixed ceiling, a row member its declared size plus the reader's
    slack (and one byte to see the bound passed); 0 when the manifest cannot be read, for
    then nothing but the manifest may be read."""
    v = verifier_module()
    if name in v.JSON_MEMBER_BYTES:
        return v.JSON_MEMBER_BYTES[name]
    try:
        with zipfile.ZipFile(bundle) as archive:
            sizes = json.loads(archive.read("manifest.json"))["sizes"]
        return int(sizes[name]) + v.SLACK_BYTES + 1
    except (KeyError, TypeError, ValueError, zipfile.BadZipFile, OSError):
        return 0


def _one_refusal(status: int, out: str, words: tuple[str, ...]) -> None:
    lines = out.splitlines()
    assert status == 2, out[-2000:]
    assert len(lines) == 1 and lines[0].startswith("storwatt-verify: "), out[-2000:]
    assert "Traceback" not in out
    for word in words:
        assert word in lines[0], (word, lines[0])


def _counted_open(taken: dict[str, int]) -> Callable[..., Any]:
    opened = zipfile.ZipFile.open

    def counted_open(archive: zipfile.ZipFile, name: Any, mode: str = "r",
                     *args: Any, **kwargs: Any) -> Any:
        raw = opened(archive, name, mode, *args, **kwargs)
        member = name.filename if isinstance(name, zipfile.ZipInfo) else name
        return _Counted(raw, member, taken) if mode == "r" else raw
    return counted_open


def test_the_count_sees_every_member_an_honest_bundle_reads(
        honest: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counting layer below is no test that cannot fail: on an honest bundle it sees
    every member, each read whole."""
    bundle = _write_zip(tmp_path / "honest.zip", list(honest.items()))
    taken: dict[str, int] = {}
    monkeypatch.setattr(zipfile.ZipFile, "open", _counted_open(taken))
    assert verify(bundle)[0] == 0
    assert taken == {name: len(data) for name, data in honest.items()}


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size if p.is_file() else -1)
                  for p in folder.rglob("*"))


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_bundle_is_refused_in_one_line_reading_only_what_its_manifest_allows(
        case: str, honest: dict[str, bytes], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    build, words = CASES[case]
    bundle = build(tmp_path / "hostile.zip", honest)
    before = _listing(tmp_path)
    taken: dict[str, int] = {}
    monkeypatch.setattr(zipfile.ZipFile, "open", _counted_open(taken))
    status, out = verify(bundle)
    monkeypatch.undo()
    _one_refusal(status, out, words)
    for name, count in taken.items():
        assert count <= _allowed(bundle, name), (name, count, _allowed(bundle, name))
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("case", list(SPECIAL))
def test_what_is_no_regular_file_is_refused_without_reading_it(case: str,
                                                               tmp_path: Path) -> None:
    make, words = SPECIAL[case]
    status, out = verify(make(tmp_path))
    _one_refusal(status, out, words)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


@pytest.mark.process
def test_the_auditors_interpreter_exits_2_on_every_hostile_bundle_within_its_memory(
        honest: dict[str, bytes], tmp_path: Path) -> None:
    """As the auditor runs it (``python3 -I -S``, its own process, a memory ceiling of
    MEMORY_CEILING): exit 2 and one line on stdout for each case, nothing on stderr, nothing
    left in its working or temporary directory."""
    inputs = [(name, build(tmp_path / f"case{i}.zip", honest), words)
              for i, (name, (build, words)) in enumerate(CASES.items())]
    specials = tmp_path / "special"
    specials.mkdir()
    inputs += [(name, make(specials), words) for name, (make, words) in SPECIAL.items()]
    work = tmp_path / "work"
    work.mkdir()
    honest_zip = _write_zip(tmp_path / "honest.zip", list(honest.items()))
    done = subprocess.run([sys.executable, "-I", "-S", str(VERIFIER), str(honest_zip)],
                          capture_output=True, text=True, cwd=work, preexec_fn=_limited,
                          timeout=budget_s(60))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr  # the ceiling lets it work
    for name, bundle, words in inputs:
        done = subprocess.run([sys.executable, "-I", "-S", str(VERIFIER), str(bundle)],
                              capture_output=True, text=True, cwd=work, preexec_fn=_limited,
                              env={"TMPDIR": str(work), "PATH": os.environ.get("PATH", "")},
                              timeout=budget_s(60))
        assert done.stderr == "", (name, done.stderr[-2000:])
        _one_refusal(done.returncode, done.stdout, words)
    assert list(work.iterdir()) == []
