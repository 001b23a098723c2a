"""Each revision's record hash, kept with the run so a report or a view does not rebuild it.

WHY: the facts hash (storwatt-record/2, :mod:`app.storage.record_hash`) serialises every
stored child record in canonical order; for a 24 h run with four power inputs it was ~40 % of
the PDF + xlsx export (issue 27). A revision is an audit entry, so the facts of a finished run
are the same in every revision: the hash is computed once — when a revision is recorded or
first needed — and stored here, one row per revision and hash format.

Each row carries the **basis** it was computed on (:func:`app.storage.record_hash.facts_basis`,
a fast fingerprint of every fact the hash covers). A view uses a stored hash only while the
loaded run still has that basis, so a resumed run or a record changed behind StorWatt's back
gets its hash rebuilt rather than a stale one printed. A row is trusted only when it carries
this PC's seal (:mod:`app.storage.record_seal`, revision 0021): the table is data any writer of
the database can add to, and a forged row must never make a view print a hash it did not
compute (issue 39). Approval checks
(:func:`app.signoff.revisions.approve`, :func:`app.signoff.revisions.check_record`) and the verifier
never read
this table: they rebuild the hash from the record.

Rows are only ever added (a changed basis adds a row beside the old one), so storing needs
INSERT alone; a database that refuses the insert (read-only file, a role without the right)
costs the next view a recomputation, never the view itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage import schema as s
from app.storage.schema import RecordHashRow
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.record_seal import seal, sealed_here


@dataclass(frozen=True)
class StoredRecordHash:
    """A revision's hashes as stored, with the basis they were computed on."""

    revision: int
    hash_format: str
    basis_sha256: str
    facts_sha256: str
    record_sha256: str
    seal: str | None = None  # this PC's HMAC of the row (None: unsealed, never trusted)

    def trusted(self, run_id: str) -> bool:
        """Whether this PC sealed exactly this row for ``run_id``."""
        return sealed_here(run_id, self.revision, self.hash_format, self.basis_sha256,
                           self.facts_sha256, self.record_sha256, self.seal)

    def sealed(self, run_id: str) -> StoredRecordHash:
        """This row with this PC's seal (unchanged when this PC has no key)."""
        return replace(self, seal=seal(run_id, self.revision, self.hash_format,
                                       self.basis_sha256, self.facts_sha256,
                                       self.record_sha256))


def load_record_hashes(conn: Connection, pk: int) -> tuple[StoredRecordHash, ...]:
    table = RecordHashRow.__table__
    rows = conn.execute(sa.select(table.c.revision, table.c.hash_format, table.c.basis_sha256,
                                  table.c.facts_sha256, table.c.record_sha256, table.c.seal)
                        .where(table.c.run_id == pk).order_by(table.c.id)).all()
    return tuple(StoredRecordHash(*r) for r in rows)


def store_record_hashes(database: Database, run_id: str,
                        hashes: Iterable[StoredRecordHash]) -> bool:
    """Add the rows not stored yet; False when the database refused them (the caller keeps
    its computed hashes for this view and the next view computes them again)."""
    wanted = [h.sealed(run_id) for h in hashes]
    if not wanted:
        return True
    if database.read_only:  # an archived station's file: nothing may be written to it
        return False
    table = RecordHashRow.__table__
    wall = datetime.now(timezone.utc).isoformat()
    try:
        with database.read() as conn:  # one transaction: look, then add
            pk = conn.execute(sa.select(s.Run.id).where(s.Run.uuid == run_id)).scalar()
            if pk is None:
                return False
            have = {(h.revision, h.hash_format, h.basis_sha256, h.seal)
                    for h in load_record_hashes(conn, pk)}
            rows = [{"run_id": pk, "revision": h.revision, "hash_format": h.hash_format,
                     "basis_sha256": h.basis_sha256, "facts_sha256": h.facts_sha256,
                     "record_sha256": h.record_sha256, "computed_wall": wall, "seal": h.seal}
                    for h in wanted
                    if h.seal and (h.revision, h.hash_format, h.basis_sha256, h.seal) not in have]
            if rows:
                conn.execute(table.insert(), rows)
    except (StorageError, sa.exc.SQLAlchemyError):
        return False
    return True
