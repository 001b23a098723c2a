"""Sign-off of a stored run: the record's revisions, what each changed, and QA's approvals.

The report is the document a lab signs (issue 14 item 15). Revision 1 is the record as the run
stored it; every audited entry that bears a verdict (a COM result, a disposition) makes the
next revision, which lists the verdicts it changed. Each revision has its own SHA-256
(:mod:`app.storage.record_hash`). QA approves one revision: the approval stores the revision
number and its hash, so a report of a later revision shows the approval as applying to that
earlier revision, never to the one printed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.com_verdict import com_verdicts
from app.storage.audit import VERDICT_KINDS, AuditEntry, AuditKind, add_approval
from app.storage.db import Database
from app.storage.record_hash import facts_sha256, record_sha256
from app.storage.stored import StoredRun


@dataclass(frozen=True)
class RecordRevision:
    number: int
    sha256: str
    entry: AuditEntry | None  # the entry that made this revision (None: as recorded)
    changes: tuple[str, ...]  # "COM parity-raid: NOT VERIFIED → PASSED"

    @property
    def summary(self) -> str:
        return "; ".join(self.changes)


@dataclass(frozen=True)
class Approval:
    entry: AuditEntry
    revision: int
    sha256: str  # the hash QA approved
    current: bool  # it approves the revision the report shows
    intact: bool  # the approved revision still hashes to what QA approved

    def describe(self) -> str:
        """One line for every view; a stale or broken approval says so in the same line."""
        who = f"Approved by {self.entry.author} on {self.entry.when}: {self.entry.text}"
        scope = f"applies to revision {self.revision} (SHA-256 {self.sha256})"
        if not self.intact:
            return f"{who} — {scope}, which no longer hashes to that value: NOT VALID"
        if not self.current:
            return f"{who} — {scope}, not to the later revision shown here"
        return f"{who} — {scope}"


@dataclass(frozen=True)
class SignOff:
    revisions: tuple[RecordRevision, ...]  # oldest first, never empty
    approvals: tuple[Approval, ...]  # oldest first

    @property
    def current(self) -> RecordRevision:
        return self.revisions[-1]

    @property
    def approval(self) -> Approval | None:
        """QA's latest approval of the revision shown, if it still hashes to what they
        approved."""
        return next((a for a in reversed(self.approvals) if a.current and a.intact), None)

    @property
    def status(self) -> str:
        """``Revision 2 — approved by A. QA`` / ``Revision 3 — not approved (…)``."""
        head = f"Revision {self.current.number}"
        approval = self.approval
        if approval is not None:
            return f"{head} — approved by {approval.entry.author}"
        if self.approvals:
            return f"{head} — not approved (the last approval applies to revision " \
                   f"{self.approvals[-1].revision})"
        return f"{head} — not approved by QA"


def sign_off(run: StoredRun) -> SignOff:
    """Every revision of ``run``'s record (its loaded audit trail) and its approvals."""
    facts = facts_sha256(run)
    revisions: list[RecordRevision] = []
    before = _verdicts(replace(run, audit=()))
    starts = [i for i, e in enumerate(run.audit) if e.kind in VERDICT_KINDS]
    revisions.append(RecordRevision(1, record_sha256(_upto(run, starts[0] if starts else None),
                                                     facts), None, ("as recorded",)))
    for number, start in enumerate(starts, 2):
        end = starts[number - 1] if number - 1 < len(starts) else None
        at = _upto(run, end)
        after = _verdicts(at)
        entry = run.audit[start]
        revisions.append(RecordRevision(number, record_sha256(at, facts), entry,
                                        _changes(before, after, entry)))
        before = after
    by_number = {r.number: r for r in revisions}
    current = revisions[-1].number
    approvals = tuple(
        Approval(e, e.revision or 0, e.record_sha256 or "", e.revision == current,
                 e.revision in by_number and by_number[e.revision].sha256 == e.record_sha256)
        for e in run.audit if e.kind is AuditKind.APPROVAL)
    return SignOff(tuple(revisions), approvals)


def _upto(run: StoredRun, end: int | None) -> StoredRun:
    """``run`` with the audit entries before index ``end`` (all when None)."""
    return run if end is None else replace(run, audit=run.audit[:end])


def _verdicts(run: StoredRun) -> dict[str, str]:
    """The verdicts an audited entry can change, by what the revision table calls them."""
    found = {f"COM {v.com_id}": v.state.value for v in com_verdicts(run)}
    disposition = next((e for e in reversed(run.audit) if e.kind is AuditKind.DISPOSITION),
                       None)
    found["Disposition"] = (disposition.disposition.upper() if disposition and
                            disposition.disposition else "not reviewed")
    return found


def _changes(before: dict[str, str], after: dict[str, str], entry: AuditEntry) -> tuple[str, ...]:
    changed = tuple(f"{k}: {before.get(k, '—')} → {v}" for k, v in after.items()
                    if before.get(k) != v)
    source = f"(audit entry #{entry.entry_id})"
    if not changed:
        return (f"{entry.what}: verdict unchanged, new evidence {source}",)
    return changed[:-1] + (f"{changed[-1]} {source}",)


def approve(database: Database, run: StoredRun, author: str, statement: str) -> AuditEntry:
    """Record QA's approval of ``run``'s current revision (the one just loaded and shown).

    Refused when a verdict entry was added since ``run`` was loaded (the storage layer checks
    the revision in the same transaction as the insert)."""
    current = sign_off(run).current
    return add_approval(database, run.run_id, statement, author, current.number,
                        current.sha256)
