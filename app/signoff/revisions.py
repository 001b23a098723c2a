"""Sign-off of a stored run: the record's revisions, what each changed, and QA's approvals.

The report is the document a lab signs (issue 14 item 15). Revision 1 is the record as the run
stored it; every audited entry that bears a verdict (a COM result, a disposition) makes the
next revision, which lists the verdicts it changed. Each revision has its own SHA-256
(:mod:`app.storage.record_hash`). QA approves one revision: the approval stores the revision
number and its hash, so a report of a later revision shows the approval as applying to that
earlier revision, never to the one printed.

The hash covers the record's facts, not the derived verdict (storwatt-record/2, issue 22): the
approval stores the verdict as QA saw it and the rules version that derived it. When a later
rules version judges the run differently both are shown ("approved under rules 2 as COMPLIANT;
rules 3: NON-COMPLIANT because …"): a rule change never silently validates or invalidates a
signature. Approvals of a storwatt-record/1 hash are checked in that form, with the verdict
re-derived under rules 1.

The facts hash of a long run is costly (issue 27), so it is stored per revision
(:mod:`app.storage.record_cache`) when first computed: reports and views use the stored one
while the run's facts still have the basis it was computed on **and the row carries this PC's
seal** (:mod:`app.storage.record_seal`; a row any database writer could add is never proof,
issue 39), and each process remembers the facts hashes it computed itself. Approving rebuilds
it from the record (:func:`approve`, :func:`check_record`), as the verifier does from the
bundle.

Approving a SIMULATED or NON-COMPLIANT revision, or accepting such a run, needs a confirmation
that names why; the entry keeps it and every view prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.rules.com_verdict import com_verdicts
from app.rules.compliance import ComplianceVerdict, assess_compliance
from app.core.records import VERDICT_KINDS, AuditEntry, AuditKind
from app.sequencer.capacity_optimisation import observed
from app.storage.audit import AuditError, add_approval, add_audit_entry, add_com_result
from app.storage.db import Database
from app.storage.opening import open_for_reading
from app.storage.record_cache import StoredRecordHash, store_record_hashes
from app.storage.repository import load_run
from app.storage.record_hash import (FORMAT, FORMAT_V1, facts_basis, facts_sha256,
                                     facts_sha256_v1, record_sha256, record_sha256_v1)
from app.storage.stored import StoredRun


@dataclass(frozen=True)
class RecordRevision:
    number: int
    sha256: str
    entry: AuditEntry | None  # the entry that made this revision (None: as recorded)
    changes: tuple[str, ...]  # "COM parity-raid: NOT VERIFIED → PASSED"
    #: on which database it was made: revision 1 on the measuring station's, later ones
    #: where their entry was added (the lab copy, issue 26)
    made_on: str = ""

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
    hash_format: str = FORMAT
    rules_version: int = 0  # the rules that derived the verdict QA saw …
    verdict_shown: str = ""  # … and that verdict ("COMPLIANT", "NON-COMPLIANT because …")
    rules_now: int = 0  # today's rules …
    verdict_now: str = ""  # … and the same record's verdict under them

    def describe(self) -> str:
        """One line for every view; a stale or broken approval says so in the same line, and
        a verdict today's rules derive differently is shown beside the one QA approved."""
        who = f"Approved by {self.entry.author} on {self.entry.when}: {self.entry.text}"
        scope = (f"applies to revision {self.revision} (SHA-256 {self.sha256}, "
                 f"{self.hash_format})")
        if not self.intact:
            return f"{who} — {scope}, which no longer hashes to that value: NOT VALID"
        attested = f"approved under rules {self.rules_version} as {self.verdict_shown}"
        if self.verdict_now and self.verdict_now != self.verdict_shown:
            attested += f"; rules {self.rules_now}: {self.verdict_now}"
        if self.entry.confirmation:
            attested += f"; confirmed: {self.entry.confirmation}"
        if not self.current:
            return f"{who} — {scope}, not to the later revision shown here — {attested}"
        return f"{who} — {scope} — {attested}"


@dataclass(frozen=True)
class SignOff:
    revisions: tuple[RecordRevision, ...]  # oldest first, never empty
    approvals: tuple[Approval, ...]  # oldest first
    facts_sha256: str = ""  # the facts hash every revision's hash was built on
    #: the lab database where the run's sign-off is made, when it is not this copy's
    home: str = ""

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
        """``Revision 2 — approved by A. QA`` / ``Revision 3 — not approved (…)``; on a copy
        whose sign-off is made on the lab database, that said after it (issue 39)."""
        if not self.home:
            return self._decision
        shows = "as measured" if self.current.number == 1 else "as recorded here"
        return (f"{self._decision}; sign-off: on the lab database {self.home}; this copy "
                f"shows revision {self.current.number} {shows}")

    @property
    def _decision(self) -> str:
        head = f"Revision {self.current.number}"
        approval = self.approval
        if approval is not None:
            return f"{head} — approved by {approval.entry.author}"
        if self.approvals:
            last = self.approvals[-1]
            if last.current and not last.intact:
                return (f"{head} — not approved: the record changed after revision "
                        f"{last.revision} was approved")
            return f"{head} — not approved (the last approval applies to revision " \
                   f"{last.revision})"
        return f"{head} — not approved by QA"


def sign_off(run: StoredRun, *, recompute: bool = False) -> SignOff:
    """Every revision of ``run``'s record (its loaded audit trail) and its approvals.

    The facts hash is the one this process computed, or this PC sealed, for the run's basis
    when there is one (a report or a view never rebuilds it twice); ``recompute``: rebuild it
    from the record all the same, as an approval check does."""
    facts = None if recompute else stored_facts_sha256(run)
    if facts is None:
        facts = facts_sha256(run)
        _COMPUTED[(run.run_id, facts_basis(run))] = facts
        while len(_COMPUTED) > _COMPUTED_MAX:
            del _COMPUTED[next(iter(_COMPUTED))]
    revisions: list[RecordRevision] = []
    before = _verdicts(replace(run, audit=()))
    starts = [i for i, e in enumerate(run.audit) if e.kind in VERDICT_KINDS]
    revisions.append(RecordRevision(1, record_sha256(_upto(run, starts[0] if starts else None),
                                                     facts), None, ("as recorded",),
                                    measured_on(run)))
    for number, start in enumerate(starts, 2):
        end = starts[number - 1] if number - 1 < len(starts) else None
        at = _upto(run, end)
        after = _verdicts(at)
        entry = run.audit[start]
        revisions.append(RecordRevision(number, record_sha256(at, facts), entry,
                                        _changes(before, after, entry),
                                        entry.made_on or NOT_RECORDED))
        before = after
    approvals = tuple(_approval(run, e, revisions, starts, run.compliance)
                      for e in run.audit if e.kind is AuditKind.APPROVAL)
    return SignOff(tuple(revisions), approvals, facts, run.signoff_home)


#: facts hashes this process rebuilt from a record, by (run id, basis): a second view or
#: export of the same record in one process (the GUI) does not rebuild it again
_COMPUTED: dict[tuple[str, str], str] = {}
_COMPUTED_MAX = 64


def stored_facts_sha256(run: StoredRun) -> str | None:
    """The facts hash for ``run``'s current basis that this process computed or this PC
    sealed (app.storage.record_seal), if any: an unsealed row is never trusted."""
    basis = facts_basis(run)
    if (run.run_id, basis) in _COMPUTED:
        return _COMPUTED[(run.run_id, basis)]
    return next((h.facts_sha256 for h in _trusted(run)), None)


def _trusted(run: StoredRun) -> list[StoredRecordHash]:
    """The stored hashes of ``run``'s current basis that carry this PC's seal."""
    basis = facts_basis(run)
    return [h for h in run.record_hashes
            if h.hash_format == FORMAT and h.basis_sha256 == basis and h.trusted(run.run_id)]


def remember_record_hashes(database: Database, run: StoredRun) -> StoredRun:
    """``run`` with a stored record hash for every revision: those missing (a run not viewed
    since it was recorded, a revision added since, a changed basis) are computed — the facts
    hash at most once — and stored; a database that refuses them costs only the next view a
    recomputation."""
    run, new = hashed(run)
    store_record_hashes(database, run.run_id, new)
    return run


def hashed(run: StoredRun, signed: SignOff | None = None
           ) -> tuple[StoredRun, tuple[StoredRecordHash, ...]]:
    """``run`` carrying a record hash for every revision, and the ones not stored yet (for
    :func:`app.storage.record_cache.store_record_hashes` once the caller may write)."""
    basis = facts_basis(run)
    have = {h.revision for h in _trusted(run)}
    if signed is None and len(have) == 1 + sum(e.kind in VERDICT_KINDS for e in run.audit):
        return run, ()
    signed = signed or sign_off(run)
    new = tuple(StoredRecordHash(r.number, FORMAT, basis, signed.facts_sha256, r.sha256)
                .sealed(run.run_id) for r in signed.revisions if r.number not in have)
    return (run.with_record_hashes(run.record_hashes + new) if new else run), new


def load_signed_run(url: str | None, run_id: str) -> StoredRun:
    """:func:`app.storage.opening.load_one_run` with every revision's record hash stored (what a
    one-shot command that prints the hash needs)."""
    database = open_for_reading(url)
    try:
        return remember_record_hashes(database, load_run(database, run_id))
    finally:
        database.close()


def store_hashes(url: str | None, run_id: str, new: tuple[StoredRecordHash, ...]) -> None:
    """Store ``new`` (from :func:`hashed`) in the database at ``url``, if there are any."""
    if new:
        database = open_for_reading(url)
        try:
            store_record_hashes(database, run_id, new)
        finally:
            database.close()


@dataclass(frozen=True)
class RecordCheck:
    """The record hash rebuilt from the record beside the one stored for the revision."""

    revision: int
    stored: str | None  # the stored hash for the run's basis (None: none stored)
    rebuilt: str

    @property
    def matches(self) -> bool:
        return self.stored is None or self.stored == self.rebuilt


def check_record(run: StoredRun) -> tuple[SignOff, RecordCheck]:
    """The sign-off with every hash rebuilt from the record (approvals checked against the
    record, not against a stored hash) and how the current revision's rebuilt hash compares
    with the one views print."""
    checked = sign_off(run, recompute=True)
    shown = sign_off(run) if stored_facts_sha256(run) else checked
    return checked, RecordCheck(checked.current.number,
                                shown.current.sha256 if shown is not checked else None,
                                checked.current.sha256)


#: where an entry added before schema revision 0017 was made: it was not recorded
NOT_RECORDED = "not recorded (entry older than schema 0017)"
INSERTER_NOT_RECORDED = "not recorded (entry older than schema 0022)"


def measured_on(run: StoredRun) -> str:
    """Where revision 1 was made: the station that measured the run, on its own database."""
    return f"station {run.config.station or '(name not recorded)'}, as measured"


def because(verdict: ComplianceVerdict) -> str:
    """``COMPLIANT`` or ``NON-COMPLIANT because not met: Interval length, Calibration``: the
    verdict as an approval stores and shows it (the report's compliance block gives each
    criterion's evidence)."""
    if verdict.compliant:
        return verdict.label
    return f"{verdict.label} because not met: " + ", ".join(c.name for c in verdict.failures)


def _approval(run: StoredRun, e: AuditEntry, revisions: list[RecordRevision],
              starts: list[int], today: ComplianceVerdict) -> Approval:
    """An approval checked in the byte form it was given in: storwatt-record/2 against the
    revision's facts hash, storwatt-record/1 (no format stored) against the old form with the
    verdict re-derived under rules 1 — what that approval saw."""
    number = e.revision or 0
    current = number == revisions[-1].number
    known = 1 <= number <= len(revisions)
    if e.hash_format not in (None, FORMAT_V1):
        intact = known and revisions[number - 1].sha256 == e.record_sha256
        return Approval(e, number, e.record_sha256 or "", current, intact, e.hash_format,
                        e.rules_version or 0, e.verdict_shown or "", today.rules_version,
                        because(today))
    old = assess_compliance(run, rules=1)
    intact = known and e.record_sha256 == record_sha256_v1(
        _upto(run, starts[number - 1] if number - 1 < len(starts) else None), old,
        facts_sha256_v1(run))
    return Approval(e, number, e.record_sha256 or "", current, intact, FORMAT_V1, 1,
                    because(old), today.rules_version, because(today))


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


def concern(verdict: ComplianceVerdict) -> str:
    """What makes signing a run off need a confirmation: ``SIMULATED — NON-COMPLIANT (not
    met: real instruments)``, or ``""`` for a compliant run on real instruments."""
    if verdict.compliant:
        return ""
    return ("SIMULATED — " if verdict.simulated else "") + verdict.short()


def _confirmed(verdict: ComplianceVerdict, confirm: str, what: str, flag: str) -> str | None:
    """The stored confirmation: refused without one when the run is SIMULATED or
    NON-COMPLIANT (it must name why QA signs it anyway)."""
    why, reason = concern(verdict), (confirm or "").strip()
    if not why:
        return reason or None
    if not reason:
        raise AuditError(f"the run is {why}: {what} it needs a confirmation that names why "
                         f"({flag} REASON, or the dialog's confirmation)")
    return f"{what} although {why}: {reason}"


def approve(database: Database, run: StoredRun, author: str, statement: str,
            confirm: str = "") -> AuditEntry:
    """Record QA's approval of ``run``'s current revision (the one just loaded and shown):
    its facts hash — rebuilt from the record, and refused when it differs from the hash stored
    for the revision (the record changed outside StorWatt) —, the verdict as shown and its
    rules version; ``confirm``: why QA approves a SIMULATED or NON-COMPLIANT revision (refused
    without it).

    Refused when a verdict entry was added since ``run`` was loaded (the storage layer checks
    the revision in the same transaction as the insert)."""
    checked, record = check_record(run)
    if not record.matches:
        raise AuditError(f"run {run.run_id[:8]} revision {record.revision} no longer hashes to "
                         f"the SHA-256 stored for it ({record.stored}; rebuilt from the record: "
                         f"{record.rebuilt}): the record changed outside StorWatt, it cannot "
                         "be approved")
    current = checked.current
    broken = next((a for a in checked.approvals if a.current and not a.intact), None)
    if broken is not None:
        raise AuditError(f"run {run.run_id[:8]} revision {broken.revision} was approved as "
                         f"SHA-256 {broken.sha256} and now hashes to {current.sha256}: the "
                         "record changed outside StorWatt after it was approved, it cannot be "
                         "approved again")
    verdict = run.compliance
    confirmation = _confirmed(verdict, confirm, "approving", "--confirm")
    entry = add_approval(database, run.run_id, statement, author, current.number,
                         current.sha256, hash_format=FORMAT, verdict_shown=because(verdict),
                         rules_version=verdict.rules_version, confirmation=confirmation)
    store_record_hashes(database, run.run_id, hashed(run, checked)[1])  # for the next views
    return entry


def accept(database: Database, run: StoredRun, author: str, reason: str,
           confirm: str = "") -> AuditEntry:
    """QA's ACCEPTED disposition; a SIMULATED or NON-COMPLIANT run needs ``confirm``."""
    confirmation = _confirmed(run.compliance, confirm, "accepting", "--confirm")
    return add_audit_entry(database, run.run_id, "disposition", reason, author, "accepted",
                           confirmation)


def record_com_result(database: Database, run: StoredRun, com: str, outcome: str,
                      evidence: str, author: str) -> AuditEntry:
    """Append the technician's heuristic result for ``com`` of ``run`` (an audited entry).

    Refused, naming the rule, for a COM the method does not know, one not available in the
    SUT, or one the station measured itself (a measured ratio is not overwritten by hand)."""
    verdicts = {v.com_id: v for v in com_verdicts(run)}
    if com not in verdicts:
        raise AuditError(f"unknown COM id {com!r}: the method knows {', '.join(verdicts)}")
    found = verdicts[com]
    if not found.available:
        listed = [v.com_id for v in verdicts.values() if v.available]
        raise AuditError(f"COM {com} is not available in this run's SUT (available: "
                         f"{', '.join(listed) or 'none'}); a result needs the COM")
    if observed(found.metric):
        raise AuditError(f"COM {com} was measured by the station ({found.result}); add a note "
                         "if the measurement is in doubt")
    return add_com_result(database, run.run_id, com, outcome, evidence, author)
