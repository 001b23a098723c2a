"""QA audit trail of stored runs: notes, dispositions, COM results and approvals are appended,
never edited.

A stored run is evidence: its samples, metrics and configuration are never changed after the
run ends. What people say about a run is therefore a separate, append-only row in
``audit_entries``: a note; QA's disposition ("accepted" or "rejected" with the reason); a
technician's heuristic COM result with its evidence (revision 0006: ``subject`` is the COM id,
``outcome`` passed / not-passed); QA's approval of one revision of the record (``revision`` and
``record_sha256`` name what was approved). The run's current disposition is its latest
disposition entry. Entries that bear a verdict (dispositions, COM results) each start a new
revision of the signed record (:func:`record_revision`, ``app.signoff.revisions``). There is no
update or
delete here, and revision 0002 adds database triggers that refuse UPDATE and DELETE on the
table, so even a hand-written SQL statement cannot rewrite the trail.
"""

from __future__ import annotations

import getpass
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone

import sqlalchemy as sa

from app.core import plain_text
from app.core.records import (VERDICT_KINDS, AuditEntry, AuditKind, ComOutcome, Disposition,
                              RunStatus)
from app.core.station_settings import lab_database, station_name
from app.storage import schema as s
from app.storage.schema import MAX_AUTHOR, AuditEntryRow
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.identity import where_made
from app.storage.run_ids import resolve_run_id
from app.storage.server_link import shown



class AuditError(StorageError):
    """An audit entry was refused (missing author or reason, run still running …)."""


def _validated(kind: str, text: str, author: str,
               disposition: str | None) -> tuple[AuditKind, Disposition | None, str, str]:
    try:
        kind = AuditKind(kind)
    except ValueError:
        raise AuditError(
            f"audit entry kind must be 'note' or 'disposition', not {kind!r}") from None
    if kind not in (AuditKind.NOTE, AuditKind.DISPOSITION):
        raise AuditError(f"a {kind.value} entry is added with its own function "
                         "(add_com_result, add_approval)")
    text, author = (text or "").strip(), _author(author)
    if kind is AuditKind.NOTE:
        if disposition is not None:
            raise AuditError("a note carries no disposition: use kind 'disposition'")
        if not text:
            raise AuditError("a note needs its text")
        return kind, None, text, author
    try:
        decided = Disposition(str(disposition).lower())
    except ValueError:
        raise AuditError(
            f"disposition must be 'accepted' or 'rejected', not {disposition!r}") from None
    if not text:
        raise AuditError(f"a disposition needs its reason (why the run is {decided})")
    return kind, decided, text, author


def add_audit_entry(database: Database, run_id: str, kind: str, text: str, author: str,
                    disposition: str | None = None,
                    confirmation: str | None = None) -> AuditEntry:
    """Append a note or a QA disposition to a run (``run_id`` may be a unique prefix).

    A disposition needs a finished run: deciding on a run still being recorded would judge
    data that does not exist yet. Nothing of the run itself is touched.
    """
    kind, decided, text, author = _validated(kind, text, author, disposition)
    entry = AuditEntry(0, "", kind, decided, text, author, "",
                       confirmation=(confirmation or "").strip() or None)
    return _append(database, run_id, entry, "a disposition" if decided is not None else None)


def add_com_result(database: Database, run_id: str, com: str, outcome: str, evidence: str,
                   author: str) -> AuditEntry:
    """Append a technician's heuristic result for one COM, with the evidence seen.

    Only the entry's own fields are checked here; whether the COM may take a result (known to
    the method, available in the SUT, not measured by the station) is
    :func:`app.signoff.revisions.record_com_result`'s, which calls this."""
    author, evidence = _author(author), (evidence or "").strip()
    try:
        found = ComOutcome(str(outcome).lower())
    except ValueError:
        raise AuditError(f"COM result must be 'passed' or 'not-passed', not {outcome!r}") from None
    if not (com or "").strip():
        raise AuditError("a COM result names its COM")
    if not evidence:
        raise AuditError(f"a COM result needs its evidence (what showed that {com} "
                         f"{found.value.replace('-', ' ')})")
    entry = AuditEntry(0, "", AuditKind.COM_RESULT, None, evidence, author, "", com.strip(), found)
    return _append(database, run_id, entry, "a COM result")


def add_approval(database: Database, run_id: str, statement: str, author: str, revision: int,
                 record_sha256: str, *, hash_format: str | None = None,
                 verdict_shown: str | None = None, rules_version: int | None = None,
                 confirmation: str | None = None) -> AuditEntry:
    """Append QA's approval of revision ``revision`` (hash ``record_sha256`` in the byte form
    ``hash_format``, the verdict as shown and its rules version) of the record.

    Refused when a verdict entry was added since the caller computed the revision: QA must
    not sign a revision they have not seen."""
    author, statement = _author(author), (statement or "").strip()
    if not statement:
        raise AuditError("an approval needs its statement (what QA attests)")
    entry = AuditEntry(0, "", AuditKind.APPROVAL, None, statement, author, "",
                       revision=revision, record_sha256=record_sha256, hash_format=hash_format,
                       verdict_shown=verdict_shown, rules_version=rules_version,
                       confirmation=confirmation)
    return _append(database, run_id, entry, "an approval", revision)


def record_revision(entries: list[AuditEntry] | tuple[AuditEntry, ...]) -> int:
    """The record revision a trail makes: 1 as recorded, +1 per verdict-bearing entry."""
    return 1 + sum(e.kind in VERDICT_KINDS for e in entries)


def _author(author: str) -> str:
    author = (author or "").strip()
    if not author:
        raise AuditError("an audit entry needs its author (who wrote the note or decided)")
    if len(author) > MAX_AUTHOR:
        raise AuditError(f"author name longer than {MAX_AUTHOR} characters")
    return author


#: what each kind's text is called in a refusal
_TEXT_NAMES = {AuditKind.NOTE: "the note", AuditKind.DISPOSITION: "the reason",
               AuditKind.COM_RESULT: "the evidence", AuditKind.APPROVAL: "the statement"}


def _plain(entry: AuditEntry) -> None:
    """Every typed text of an entry by the rule of every typed text (``app.core.plain_text``):
    the author and the COM are one line, a note, reason or evidence may run over lines."""
    for what, text, multiline in (("the author", entry.author, False),
                                  ("the COM", entry.subject or "", False),
                                  (_TEXT_NAMES[entry.kind], entry.text, True)):
        why = plain_text.refusal(text, what, multiline)
        if why is not None:
            raise AuditError(why)


def _append(database: Database, run_id: str, entry: AuditEntry, needs_end: str | None,
            expected_revision: int | None = None) -> AuditEntry:
    """Insert ``entry`` (its id, run and time filled in here) in one transaction with the
    checks: ``needs_end`` names what only a finished run can take; ``expected_revision`` is
    the revision the caller saw."""
    _plain(entry)
    _one_place(database)
    uuid = resolve_run_id(database, run_id)
    created = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    with database.read() as conn:  # one transaction: check and append together
        pk, status = conn.execute(sa.select(s.Run.id, s.Run.status)
                                  .where(s.Run.uuid == uuid)).one()
        if needs_end is not None and status == RunStatus.RUNNING:
            raise AuditError(f"run {uuid[:8]} is still running: {needs_end} can only be "
                             "given once the run has ended (a note is fine)")
        where = where_made(conn, database.url, station_name())
        if expected_revision is not None:
            now = record_revision(audit_trail(conn, uuid))
            if now != expected_revision:
                raise AuditError(f"run {uuid[:8]} is at revision {now} now, not "
                                 f"{expected_revision}: review the current revision first")
        entry_id, inserted_by = conn.execute(sa.insert(AuditEntryRow).values(
            run_id=pk, kind=entry.kind.value,
            disposition=entry.disposition and entry.disposition.value, text=entry.text,
            author=entry.author, created_wall=created, subject=entry.subject,
            outcome=entry.outcome and entry.outcome.value, revision=entry.revision,
            record_sha256=entry.record_sha256, hash_format=entry.hash_format,
            verdict_shown=entry.verdict_shown, rules_version=entry.rules_version,
            confirmation=entry.confirmation, made_on=where, db_role=_inserter(conn))
            .returning(AuditEntryRow.id, AuditEntryRow.db_role)).one()
    return replace(entry, entry_id=entry_id, run_id=uuid, created_wall=created, made_on=where,
                   db_role=inserted_by)


def _inserter(conn: sa.Connection) -> str | None:
    """Who inserts an entry. On PostgreSQL the server's guard (revision 0022) writes the login
    whatever the client sends, so nothing is sent; a station's SQLite file has one user, the
    station's, and records its name and the operating-system account (docs/security.md)."""
    if conn.dialect.name == "postgresql":
        return None
    try:
        account = getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment or the password file
        account = "unknown"
    return f"station {station_name() or 'unnamed'}, OS account {account}"


def signoff_home(url: str) -> str:
    """The lab database (as shown) where runs read from ``url`` get their audit entries, when
    that is not ``url`` itself; "" when they are added to ``url`` (no lab database named, or
    ``url`` is it). Views of the station's copy say so (issue 39): its sign-off stays at the
    revision measured here while QA signs the lab copy."""
    lab = lab_database()
    if lab and lab != url and _parsed(lab) != _parsed(url):
        return shown(lab)
    return ""


def audit_database(given: str | None) -> str | None:
    """The database an audit command works on: ``given`` (``--db``), else the lab database
    when one is named — where this station's runs are signed off (issue 39: the README's
    ``station lab-db`` then ``runs com``/``runs approve`` lines work typed in order) — else the
    station's own (None)."""
    return given or lab_database() or None


def _one_place(database: Database) -> None:
    """A run's audit entries live in one place (issue 26): with a lab database named, QA
    works on the lab copy only, so a station refuses entries into any other database."""
    home = signoff_home(database.url)
    if home:
        raise AuditError(f"this station's runs are reviewed on the lab database "
                         f"{home}: add audit entries there (--db {home}), so that "
                         "each run's entries live in one place")


def _parsed(url: str) -> object:
    try:
        return sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return url


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
                      row.author, row.created_wall, row.subject,
                      ComOutcome(row.outcome) if row.outcome else None, row.revision,
                      row.record_sha256, row.hash_format, row.verdict_shown, row.rules_version,
                      row.confirmation, row.made_on, row.db_role)


def com_results(conn: sa.Connection,
                pks: Sequence[int] | None) -> dict[int, list[AuditEntry]]:
    """Run primary key → its COM-result entries, oldest first, for the runs ``pks`` (None:
    every run): a run list shows each run's COM state as its report does."""
    query = (sa.select(AuditEntryRow, s.Run.uuid.label("run_uuid"))
             .join(s.Run, s.Run.id == AuditEntryRow.run_id)
             .where(AuditEntryRow.kind == AuditKind.COM_RESULT.value)
             .order_by(AuditEntryRow.id))
    if pks is not None:
        query = query.where(AuditEntryRow.run_id.in_(list(pks)))
    found: dict[int, list[AuditEntry]] = defaultdict(list)
    for row in conn.execute(query).all():
        found[row.run_id].append(_entry(row.run_uuid, row))
    return found


def latest_dispositions_query(run_pks: Sequence[int] | None = None) -> sa.Select:
    """(runs.id, disposition, author) of each run's latest disposition entry (of the runs
    ``run_pks`` only, when given)."""
    latest = (sa.select(sa.func.max(AuditEntryRow.id))
              .where(AuditEntryRow.kind == AuditKind.DISPOSITION.value)
              .group_by(AuditEntryRow.run_id))
    if run_pks is not None:
        latest = latest.where(AuditEntryRow.run_id.in_(run_pks))
    return sa.select(AuditEntryRow.run_id, AuditEntryRow.disposition,
                     AuditEntryRow.author).where(AuditEntryRow.id.in_(latest))
