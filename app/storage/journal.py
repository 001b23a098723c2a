"""The run journal: where run events go when the database cannot take them.

One file per run, ``<data dir>/journal/<run id>.swj``, created and **pre-allocated** when the
run starts (sized for the planned run by :func:`reserve_bytes`), so a disk that fills up later
— often the very disk that holds the database — cannot take the space away. The writer
appends to it only while commits fail (spill-on-failure: a healthy run pays nothing but the
reservation); the file is removed once every event in it is in the database.

Layout, all integers little-endian:

* header block of :data:`HEADER_SIZE` bytes: ``MAGIC``, ``u16`` format version, ``u32``
  length and ``u32`` CRC-32 of a JSON object (run id, database, creation time, reservation),
  that JSON, zero padding;
* records, back to back: the 4-byte :data:`RECORD_MARK`, ``u32`` payload length, ``u32``
  CRC-32 of the payload, the payload (ASCII JSON ``{"seq", "event"}`` with the event in
  :mod:`app.storage.event_codec` form);
* the rest of the reservation is zeros: a zero record header ends the journal.

A record that fails its CRC, or whose header is damaged, is skipped and counted: reading
resumes at the next record mark behind it that starts an intact record (the mark holds bytes
above 127, which ASCII JSON never contains, and the CRC confirms the record), so one damaged
byte costs one record, not every record after it (issue 25: one flipped byte in record 33 of
99 lost 66 events). Unreadable bytes with no intact record behind them are the tail (a crash
mid-write, or damage there). Reading stops at a record whose ``seq`` is not above its
predecessor's (an older record left behind after the journal was emptied and reused).
Version 1 journals (no marks, written by StorWatt before issue 25) are still read, up to
their first damaged record. Nothing here uses SQLAlchemy: the journal has to work exactly
when the database does not.
"""

from __future__ import annotations

import errno
import json
import os
import struct
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy.engine import make_url

from app.core.paths import data_dir
from app.sequencer import events as ev
from app.storage.errors import StorageError
from app.storage.event_codec import EventCodecError, event_from_json, event_to_json
from drivers import guarded_file

MAGIC = b"STORWATT-JOURNAL"
VERSION = 2
READABLE_VERSIONS = (1, 2)
HEADER_SIZE = 4096
SUFFIX = ".swj"
_HEAD = struct.Struct("<16sHII")  # magic, version, header JSON length, its CRC-32
_RECORD = struct.Struct("<4sII")  # mark, payload length, CRC-32 of the payload
_RECORD_V1 = struct.Struct("<II")  # version 1: payload length, CRC-32 of the payload
#: starts every record; never inside a payload (ASCII JSON), so a reader finds the next
#: record behind a damaged one
RECORD_MARK = b"\xa7SWR"
#: Journal bytes of one power or temperature sample with its placement, batched as the
#: sequencer publishes them (≈ 300 B typical, ≈ 530 B for a worst-case sample published
#: alone; checked by tests/test_storage_journal.py).
SAMPLE_BOUND_B = 640
#: Phases, intervals, log lines, metrics, histograms of any plan, and workload slices (≤ 2/s).
FIXED_BOUND_B = 4 * 2**20
WORKLOAD_EVENTS_PER_S = 2.0
GROW_CHUNK_B = 8 * 2**20  # when a run outlives its plan, the journal grows by this much


class JournalError(StorageError):
    """The journal cannot be created, written or read (message names the file and why)."""


class JournalInUseError(JournalError):
    """Another live writer (this or another process) is still writing this journal."""


@dataclass(frozen=True)
class JournalHeader:
    run_id: str
    database: str  # database_key() of the database the run belongs to
    created_wall: str
    reserved_bytes: int
    #: the id of that database (``database_identity``; "" in journals written before it):
    #: a journal is never imported by itself into another database found at the same path
    database_id: str = ""


@dataclass(frozen=True)
class JournalRecord:
    seq: int  # the writer's sequence number (``runs.stored_seq`` says what the DB has)
    event: ev.RunEvent


@dataclass(frozen=True)
class JournalContents:
    path: Path
    header: JournalHeader
    records: tuple[JournalRecord, ...]
    torn_at: int | None = None  # byte offset of an unreadable tail, None if clean
    #: (byte offset, length) of each damaged stretch skipped before an intact record
    damaged: tuple[tuple[int, int], ...] = ()

    @property
    def intact(self) -> bool:
        """Every byte written was read: nothing in the file is left unimported."""
        return self.torn_at is None and not self.damaged


def journal_dir() -> Path:
    """Journals live beside the station database, in the station data directory."""
    return data_dir() / "journal"


def journal_path(run_id: str, directory: Path | None = None) -> Path:
    return (directory or journal_dir()) / f"{run_id}{SUFFIX}"


def database_key(url: str) -> str:
    """The database a journal belongs to, comparable across processes: password hidden, a
    relative SQLite path made absolute."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        parsed = parsed.set(database=str(Path(parsed.database).resolve()))
    return parsed.render_as_string(hide_password=True)


def reserve_bytes(planned_s: float, samples_per_s: float) -> int:
    """Space to pre-allocate for a run: every sample and event of the planned duration."""
    per_s = samples_per_s * 1.25 + WORKLOAD_EVENTS_PER_S  # + temperature (≤ 1/5 of power)
    return HEADER_SIZE + FIXED_BOUND_B + int(max(planned_s, 0.0) * per_s * SAMPLE_BOUND_B)


# --- writing ----------------------------------------------------------------------------------

class JournalFile:
    """The open journal of one run being written; this process holds its lock until close."""

    def __init__(self, path: Path, fd: int, capacity: int) -> None:
        self.path = path
        self._fd = fd
        self._capacity = capacity
        self._offset = HEADER_SIZE
        self.records = 0  # records written since creation or the last reset

    @classmethod
    def create(cls, path: Path, header: JournalHeader) -> JournalFile:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o644)
        except OSError as exc:
            raise JournalError(f"cannot create the run journal {path}: {exc.strerror}") from exc
        try:
            _lock(fd, path)
            _stated(lambda: _write_at(fd, 0, _header_bytes(header)), "write", path)
            _reserve(fd, HEADER_SIZE, header.reserved_bytes - HEADER_SIZE, path)
            _stated(lambda: os.fsync(fd), "write", path)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return cls(path, fd, header.reserved_bytes)

    def append(self, records: Iterable[tuple[int, ev.RunEvent]], *,
               durable: bool = True) -> None:
        """Write records after the last one and, when ``durable``, make them durable (fsync)
        before returning."""
        chunks = []
        for seq, event in records:
            try:
                payload = json.dumps({"seq": seq, "event": event_to_json(event)},
                                     separators=(",", ":"), allow_nan=False).encode()
            except EventCodecError as exc:
                raise JournalError(f"cannot journal event {seq}: {exc}") from exc
            chunks.append(_RECORD.pack(RECORD_MARK, len(payload), zlib.crc32(payload))
                          + payload)
        data = b"".join(chunks)
        if not data:
            return
        end = self._offset + len(data) + _RECORD.size  # keep room for the end marker
        if end > self._capacity:
            grow = max(end - self._capacity, GROW_CHUNK_B)
            _reserve(self._fd, self._capacity, grow, self.path)
            self._capacity += grow
        fd = self._fd
        _stated(lambda: _write_at(fd, self._offset, data + bytes(_RECORD.size)), "write",
                self.path)  # + end marker
        if durable:
            _stated(lambda: os.fsync(fd), "write", self.path)
        self._offset += len(data)
        self.records += len(chunks)

    @property
    def end(self) -> int:
        """Byte offset just after the last record written."""
        return self._offset

    def reset(self) -> None:
        """Everything journaled is in the database now: reuse the space from the start."""
        if self.records:
            _stated(lambda: _write_at(self._fd, HEADER_SIZE, bytes(_RECORD.size)), "empty",
                    self.path)
            self._offset, self.records = HEADER_SIZE, 0

    def close(self) -> None:
        """Flush and release the lock; the file stays for an import."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        try:
            _stated(lambda: os.fsync(fd), "write", self.path)
        finally:
            os.close(fd)  # closing the descriptor releases its lock

    def discard(self) -> None:
        """Close and delete: every event the journal held is in the database."""
        self.close()
        _stated(lambda: self.path.unlink(missing_ok=True), "delete", self.path)


def _stated(step: Callable[[], object], verb: str, path: Path) -> None:
    """Run one file operation of the journal; an ``OSError`` (a full disk, a failing device)
    becomes a :class:`JournalError` naming the file — the writer's thread turns those into a
    stated storage problem instead of dying of a raw traceback (issue 40 §1)."""
    try:
        step()
    except OSError as exc:
        why = ("the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
               else exc.strerror or str(exc))
        raise JournalError(f"cannot {verb} the run journal {path}: {why}") from exc


def _header_bytes(header: JournalHeader) -> bytes:
    fields = {"run_id": header.run_id, "database": header.database,
              "created_wall": header.created_wall, "reserved_bytes": header.reserved_bytes}
    if header.database_id:
        fields["database_id"] = header.database_id
    text = json.dumps(fields).encode()
    head = _HEAD.pack(MAGIC, VERSION, len(text), zlib.crc32(text)) + text
    if len(head) > HEADER_SIZE:
        raise JournalError(f"journal header too long ({len(head)} bytes)")
    return head + bytes(HEADER_SIZE - len(head))


def new_header(run_id: str, database_url: str, reserved: int,
               database_id: str = "") -> JournalHeader:
    return JournalHeader(run_id, database_key(database_url),
                         datetime.now(timezone.utc).isoformat(timespec="seconds"), reserved,
                         database_id)


def _write_at(fd: int, offset: int, data: bytes) -> None:
    os.lseek(fd, offset, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _reserve(fd: int, offset: int, length: int, path: Path) -> None:
    """Allocate real blocks (not a sparse hole) so later writes cannot fail for space."""
    if length <= 0:
        return
    try:
        if hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, offset, length)
                return
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        zeros = bytes(2**20)
        done = 0
        while done < length:
            n = min(len(zeros), length - done)
            _write_at(fd, offset + done, zeros[:n])
            done += n
    except OSError as exc:
        why = ("the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
               else exc.strerror)
        raise JournalError(f"cannot reserve {length / 2**20:.1f} MiB for the run journal "
                           f"{path}: {why}") from exc


def _lock(fd: int, path: Path) -> None:
    """An exclusive, non-blocking lock held while a writer owns the journal, so an import
    started meanwhile (the GUI opening the database, ``storwatt db recover``) leaves it alone."""
    try:
        if sys.platform == "win32":
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        raise JournalInUseError(f"the run journal {path} is being written by a running "
                                "StorWatt: it is imported once that run has ended") from exc


# --- reading ----------------------------------------------------------------------------------

def _parse_header(block: bytes, path: Path) -> tuple[JournalHeader, int]:
    if len(block) < _HEAD.size or not block.startswith(MAGIC):
        raise JournalError(f"{path} is not a StorWatt run journal")
    _, version, length, crc = _HEAD.unpack_from(block)
    if version not in READABLE_VERSIONS:
        raise JournalError(f"run journal {path} has format version {version}; this StorWatt "
                           f"reads versions {', '.join(map(str, READABLE_VERSIONS))}: import "
                           "it with a matching StorWatt")
    text = block[_HEAD.size:_HEAD.size + length]
    if len(text) != length or zlib.crc32(text) != crc:
        raise JournalError(f"the header of run journal {path} is damaged")
    try:
        fields = json.loads(text)
        header = JournalHeader(str(fields["run_id"]), str(fields["database"]),
                               str(fields["created_wall"]), int(fields["reserved_bytes"]),
                               str(fields.get("database_id", "")))
    except (ValueError, KeyError, TypeError) as exc:  # a valid CRC over the wrong content
        missing = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) else "not readable"
        raise JournalError(f"the header of run journal {path} is damaged "
                           f"({missing})") from None
    return header, version


def read_header(path: Path) -> JournalHeader:
    """The header of the journal at ``path`` (a typed ``db recover --journal`` path: a FIFO
    or a device is refused by the guarded reader instead of hanging the command)."""
    try:
        fd = guarded_file.open_regular(path, "run journal")
    except guarded_file.GuardedFileError as exc:
        raise JournalError(str(exc)) from None
    with os.fdopen(fd, "rb") as f:
        return _parse_header(f.read(HEADER_SIZE), path)[0]


def read_journal(path: Path, fd: int | None = None) -> JournalContents:
    """Every intact record; damaged ones skipped and counted (``damaged``), an unreadable
    tail noted (``torn_at``). ``fd``: read through this (locked) descriptor — on Windows a
    locked file cannot be read through another one."""
    data = path.read_bytes() if fd is None else _read_all(fd)
    header, version = _parse_header(data[:HEADER_SIZE], path)
    if version == 1:
        return _read_v1(path, header, data)
    records: list[JournalRecord] = []
    damaged: list[tuple[int, int]] = []
    offset, torn_at = HEADER_SIZE, None
    while offset + _RECORD.size <= len(data):
        if data[offset:offset + _RECORD.size] == bytes(_RECORD.size):
            break  # the end marker
        found = _record_at(data, offset)
        if found is None:  # damaged: go on at the next intact record, if there is one
            after = _next_intact(data, offset + 1)
            if after is None:
                torn_at = offset
                break
            damaged.append((offset, after - offset))
            offset = after
            continue
        record, end = found
        if records and record.seq <= records[-1].seq:
            if damaged and damaged[-1][0] + damaged[-1][1] == offset:
                torn_at, _ = damaged.pop()  # the damage was the last record: a tail
            break  # an older record behind the end of a reused journal
        records.append(record)
        offset = end
    else:
        if offset < len(data):
            torn_at = offset  # a record header cut short by the end of the file
    return JournalContents(path, header, tuple(records), torn_at, tuple(damaged))


def _record_at(data: bytes, offset: int) -> tuple[JournalRecord, int] | None:
    """The intact record at ``offset`` and the offset after it, or None."""
    if offset + _RECORD.size > len(data):
        return None
    mark, length, crc = _RECORD.unpack_from(data, offset)
    start = offset + _RECORD.size
    payload = data[start:start + length]
    if mark != RECORD_MARK or len(payload) != length or zlib.crc32(payload) != crc:
        return None
    record = _decode(payload)
    return None if record is None else (record, start + length)


def _next_intact(data: bytes, start: int) -> int | None:
    """Offset of the first intact record at or after ``start``."""
    at = data.find(RECORD_MARK, start)
    while at != -1:
        if _record_at(data, at) is not None:
            return at
        at = data.find(RECORD_MARK, at + 1)
    return None


def _decode(payload: bytes) -> JournalRecord | None:
    try:
        fields = json.loads(payload)
        return JournalRecord(int(fields["seq"]), event_from_json(fields["event"]))
    except (ValueError, KeyError, TypeError, EventCodecError):
        return None


def _read_v1(path: Path, header: JournalHeader, data: bytes) -> JournalContents:
    """A version 1 journal: records without marks, so reading ends at the first damage."""
    records: list[JournalRecord] = []
    offset, torn_at = HEADER_SIZE, None
    while offset + _RECORD_V1.size <= len(data):
        length, crc = _RECORD_V1.unpack_from(data, offset)
        if length == 0:
            break
        payload = data[offset + _RECORD_V1.size:offset + _RECORD_V1.size + length]
        record = (_decode(payload) if len(payload) == length and zlib.crc32(payload) == crc
                  else None)
        if record is None:
            torn_at = offset
            break
        if records and record.seq <= records[-1].seq:
            break
        records.append(record)
        offset += _RECORD_V1.size + length
    else:
        if offset < len(data):
            torn_at = offset
    return JournalContents(path, header, tuple(records), torn_at)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 2**20):
        chunks.append(chunk)
    return b"".join(chunks)


def open_for_import(path: Path) -> int:
    """A locked descriptor on a journal no live writer owns (raises JournalInUseError)."""
    fd = os.open(path, os.O_RDWR | guarded_file.NON_BLOCKING)
    try:
        guarded_file.require_regular(fd, path, "run journal")
        _lock(fd, path)
    except guarded_file.GuardedFileError as exc:
        os.close(fd)
        raise JournalError(str(exc)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd
