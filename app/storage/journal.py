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
* records, back to back: ``u32`` payload length, ``u32`` CRC-32 of the payload, the payload
  (JSON ``{"seq", "event"}`` with the event in :mod:`app.storage.event_codec` form);
* the rest of the reservation is zeros: a zero length ends the journal.

Reading stops at the first record that is cut short or fails its CRC (a torn tail from a crash
mid-write: it is reported and ignored) or whose ``seq`` is not above its predecessor's (an
older record left behind after the journal was emptied and reused). Nothing here uses
SQLAlchemy: the journal has to work exactly when the database does not.
"""

from __future__ import annotations

import errno
import json
import os
import struct
import sys
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy.engine import make_url

from app.paths import data_dir
from app.sequencer import events as ev
from app.storage.errors import StorageError
from app.storage.event_codec import EventCodecError, event_from_json, event_to_json

MAGIC = b"STORWATT-JOURNAL"
VERSION = 1
HEADER_SIZE = 4096
SUFFIX = ".swj"
_HEAD = struct.Struct("<16sHII")  # magic, version, header JSON length, its CRC-32
_RECORD = struct.Struct("<II")  # payload length, CRC-32 of the payload
#: Journal bytes of one power or temperature sample, batched as the sequencer publishes them
#: (≈ 200 B typical, ≈ 420 B for a worst-case sample published alone; checked by
#: tests/test_storage_journal.py).
SAMPLE_BOUND_B = 512
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


@dataclass(frozen=True)
class JournalRecord:
    seq: int  # the writer's sequence number (``runs.stored_seq`` says what the DB has)
    event: ev.RunEvent


@dataclass(frozen=True)
class JournalContents:
    path: Path
    header: JournalHeader
    records: tuple[JournalRecord, ...]
    torn_at: int | None = None  # byte offset of an ignored torn/corrupt tail, None if clean


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
            _write_at(fd, 0, _header_bytes(header))
            _reserve(fd, HEADER_SIZE, header.reserved_bytes - HEADER_SIZE, path)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return cls(path, fd, header.reserved_bytes)

    def append(self, records: Iterable[tuple[int, ev.RunEvent]]) -> None:
        """Write records after the last one and make them durable (fsync) before returning."""
        chunks = []
        for seq, event in records:
            try:
                payload = json.dumps({"seq": seq, "event": event_to_json(event)},
                                     separators=(",", ":"), allow_nan=False).encode()
            except EventCodecError as exc:
                raise JournalError(f"cannot journal event {seq}: {exc}") from exc
            chunks.append(_RECORD.pack(len(payload), zlib.crc32(payload)) + payload)
        data = b"".join(chunks)
        if not data:
            return
        end = self._offset + len(data) + _RECORD.size  # keep room for the end marker
        if end > self._capacity:
            grow = max(end - self._capacity, GROW_CHUNK_B)
            _reserve(self._fd, self._capacity, grow, self.path)
            self._capacity += grow
        try:
            _write_at(self._fd, self._offset, data + bytes(_RECORD.size))  # + end marker
            os.fsync(self._fd)
        except OSError as exc:
            raise JournalError(f"cannot write the run journal {self.path}: "
                               f"{exc.strerror}") from exc
        self._offset += len(data)
        self.records += len(chunks)

    @property
    def end(self) -> int:
        """Byte offset just after the last record written."""
        return self._offset

    def reset(self) -> None:
        """Everything journaled is in the database now: reuse the space from the start."""
        if self.records:
            _write_at(self._fd, HEADER_SIZE, bytes(_RECORD.size))
            self._offset, self.records = HEADER_SIZE, 0

    def close(self) -> None:
        """Flush and release the lock; the file stays for an import."""
        if self._fd < 0:
            return
        try:
            os.fsync(self._fd)
        finally:
            os.close(self._fd)  # closing the descriptor releases its lock
            self._fd = -1

    def discard(self) -> None:
        """Close and delete: every event the journal held is in the database."""
        self.close()
        self.path.unlink(missing_ok=True)


def _header_bytes(header: JournalHeader) -> bytes:
    text = json.dumps({"run_id": header.run_id, "database": header.database,
                       "created_wall": header.created_wall,
                       "reserved_bytes": header.reserved_bytes}).encode()
    head = _HEAD.pack(MAGIC, VERSION, len(text), zlib.crc32(text)) + text
    if len(head) > HEADER_SIZE:
        raise JournalError(f"journal header too long ({len(head)} bytes)")
    return head + bytes(HEADER_SIZE - len(head))


def new_header(run_id: str, database_url: str, reserved: int) -> JournalHeader:
    return JournalHeader(run_id, database_key(database_url),
                         datetime.now(timezone.utc).isoformat(timespec="seconds"), reserved)


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

def read_header(path: Path) -> JournalHeader:
    with open(path, "rb") as f:
        return _parse_header(f.read(HEADER_SIZE), path)


def _parse_header(block: bytes, path: Path) -> JournalHeader:
    if len(block) < _HEAD.size or not block.startswith(MAGIC):
        raise JournalError(f"{path} is not a StorWatt run journal")
    _, version, length, crc = _HEAD.unpack_from(block)
    if version != VERSION:
        raise JournalError(f"run journal {path} has format version {version}; this StorWatt "
                           f"reads version {VERSION}: import it with a matching StorWatt")
    text = block[_HEAD.size:_HEAD.size + length]
    if len(text) != length or zlib.crc32(text) != crc:
        raise JournalError(f"the header of run journal {path} is damaged")
    fields = json.loads(text)
    return JournalHeader(fields["run_id"], fields["database"], fields["created_wall"],
                         fields["reserved_bytes"])


def read_journal(path: Path, fd: int | None = None) -> JournalContents:
    """Every intact record; a torn or corrupt tail ends the reading (offset in ``torn_at``).
    ``fd``: read through this (locked) descriptor — on Windows a locked file cannot be read
    through another one."""
    data = path.read_bytes() if fd is None else _read_all(fd)
    header = _parse_header(data[:HEADER_SIZE], path)
    records: list[JournalRecord] = []
    offset, torn_at = HEADER_SIZE, None
    while offset + _RECORD.size <= len(data):
        length, crc = _RECORD.unpack_from(data, offset)
        if length == 0:
            break
        payload = data[offset + _RECORD.size:offset + _RECORD.size + length]
        if len(payload) != length or zlib.crc32(payload) != crc:
            torn_at = offset
            break
        try:
            fields = json.loads(payload)
            record = JournalRecord(int(fields["seq"]), event_from_json(fields["event"]))
        except (ValueError, KeyError, TypeError, EventCodecError):
            torn_at = offset
            break
        if records and record.seq <= records[-1].seq:
            break  # an older record behind the end of a reused journal
        records.append(record)
        offset += _RECORD.size + length
    else:
        if offset < len(data):
            torn_at = offset  # a record header cut short by the end of the file
    return JournalContents(path, header, tuple(records), torn_at)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 2**20):
        chunks.append(chunk)
    return b"".join(chunks)


def open_for_import(path: Path) -> int:
    """A locked descriptor on a journal no live writer owns (raises JournalInUseError)."""
    fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        _lock(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd
