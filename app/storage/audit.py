"""QA audit trail of stored runs: notes and dispositions are appended, never edited.

A stored run is evidence: its samples, metrics and configuration are never changed after the
run ends. What QA says about a run (a note, "accepted" or "rejected" with the reason and who
decided) is therefore a separate, append-only row in ``audit_entries``; the run's current
disposition is simply its latest disposition entry. There is no update or delete here, and
revision 0002 adds database triggers that refuse UPDATE and DELETE on the table, so even a
hand-written SQL statement cannot rewrite the trail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum

import sqlalchemy as sa
from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.records import RunStatus
from app.storage import schema as s
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.repository import resolve_run_id

MAX_AUTHOR = 200


class AuditKind(StrEnum):
    NOTE = "note"
    DISPOSITION = "disposition"


class Disposition(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class AuditError(StorageError):
    """An audit entry was refused (missing author or reason, run still running …)."""


class AuditEntryRow(s.Base):
    """One audit entry (created by revision 0002; registered on the shared metadata so the
    schema check sees the same tables the migrations create)."""

    __tablename__ = "audit_entries"
    __table_args__ = (Index("ix_audit_entries_run_id", "run_id", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # AuditKind
    disposition: Mapped[str | None] = mapped_column(String(20))  # Disposition
    text: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(MAX_AUTHOR))
    created_wall: Mapped[str] = mapped_column(String(40))  # ISO 8601 UTC


@dataclass(frozen=True)
class AuditEntry:
    """An audit entry as read back (``run_id`` is the run's public id)."""

    entry_id: int
    run_id: str
    kind: AuditKind
    disposition: Disposition | None
    text: str
    author: str
    created_wall: str

    def describe(self) -> str:
        what = (f"{self.disposition.upper()}" if self.kind is AuditKind.DISPOSITION
                else "note")
        return f"{self.created_wall[:19].replace('T', ' ')} UTC  {what} by {self.author}: " \
               f"{self.text}"


def _validated(kind: str, text: str, author: str,
               disposition: str | None) -> tuple[AuditKind, Disposition | None, str, str]:
    try:
        kind = AuditKind(kind)
    except ValueError:
        raise AuditError(f"audit entry kind must be 'note' or 'disposition', not {kind!r}")
    text, author = (text or "").strip(), (author or "").strip()
    if not author:
        raise AuditError("an audit entry needs its author (who wrote the note or decided)")
    if len(author) > MAX_AUTHOR:
        raise AuditError(f"author name longer than {MAX_AUTHOR} characters")
    if kind is AuditKind.NOTE:
        if disposition is not None:
            raise AuditError("a note carries no disposition: use kind 'disposition'")
        if not text:
            raise AuditError("a note needs its text")
        return kind, None, text, author
    try:
        decided = Disposition(str(disposition).lower())
    except ValueError:
        raise AuditError(f"disposition must be 'accepted' or 'rejected', not {disposition!r}")
    if not text:
        raise AuditError(f"a disposition needs its reason (why the run is {decided})")
    return kind, decided, text, author


def add_audit_entry(database: Database, run_id: str, kind: str, text: str, author: str,
                    disposition: str | None = None) -> AuditEntry:
    """Append a note or a QA disposition to a run (``run_id`` may be a unique prefix).

    A disposition needs a finished run: deciding on a run still being recorded would judge
    data that does not exist yet. Nothing of the run itself is touched.
    """
    kind, decided, text, author = _validated(kind, text, author, disposition)
    uuid = resolve_run_id(database, run_id)
    created = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    with database.read() as conn:  # one transaction: check and append together
        pk, status = conn.execute(sa.select(s.Run.id, s.Run.status)
                                  .where(s.Run.uuid == uuid)).one()
        if decided is not None and status == RunStatus.RUNNING:
            raise AuditError(f"run {uuid[:8]} is still running: a disposition can only be "
                             "given once the run has ended (a note is fine)")
        entry_id = conn.execute(sa.insert(AuditEntryRow).values(
            run_id=pk, kind=kind.value, disposition=decided and decided.value, text=text,
            author=author, created_wall=created).returning(AuditEntryRow.id)).scalar_one()
    return AuditEntry(entry_id, uuid, kind, decided, text, author, created)


def audit_entries(database: Database, run_id: str) -> list[AuditEntry]:
    """A run's audit trail, oldest first."""
    uuid = resolve_run_id(database, run_id)
    with database.read() as conn:
        return audit_trail(conn, uuid)


def audit_trail(conn: sa.Connection, uuid: str) -> list[AuditEntry]:
    """The audit trail of the run ``uuid`` on an open connection (``load_run`` reads it with
    the run, so every report carries the QA disposition)."""
    query = (sa.select(AuditEntryRow).join(s.Run, s.Run.id == AuditEntryRow.run_id)
             .where(s.Run.uuid == uuid).order_by(AuditEntryRow.id))
    return [_entry(uuid, r) for r in conn.execute(query).all()]


def _entry(uuid: str, r: sa.Row) -> AuditEntry:
    row = r[0] if len(r) == 1 else r
    return AuditEntry(row.id, uuid, AuditKind(row.kind),
                      Disposition(row.disposition) if row.disposition else None, row.text,
                      row.author, row.created_wall)


def latest_dispositions_query() -> sa.Select:
    """(runs.id, disposition, author) of each run's latest disposition entry."""
    latest = (sa.select(sa.func.max(AuditEntryRow.id))
              .where(AuditEntryRow.kind == AuditKind.DISPOSITION.value)
              .group_by(AuditEntryRow.run_id))
    return sa.select(AuditEntryRow.run_id, AuditEntryRow.disposition,
                     AuditEntryRow.author).where(AuditEntryRow.id.in_(latest))
