"""The history detail's sign-off actions: a COM result and an approval through their dialogs,
recorded as audited entries and shown with the revision (issue 14 items 11, 15)."""

from __future__ import annotations

import pytest

from app.rules.com_verdict import ComState, com_verdicts
from app.reports.content import build_content
from app.storage.audit import AuditError, AuditKind, audit_entries
from tests.support.recorded_runs import record_run
from ui.history import signoff_dialogs
from ui.history.detail import RunDetailView


@pytest.fixture()
def detail(qtbot, tmp_path):
    recorded = record_run(tmp_path / "r.db", coms=("deduplication", "thin-provisioning"))
    view = RunDetailView(recorded.database, recorded.run_id)
    qtbot.addWidget(view)
    return view


def _answer(monkeypatch, dialog: type, fill) -> None:
    """Make ``dialog.exec`` fill its fields with ``fill(dialog)`` and press OK."""
    monkeypatch.setattr(dialog, "exec", lambda self: fill(self) or 1)


def test_com_result_and_approval_through_the_dialogs(detail, monkeypatch) -> None:
    assert detail.signoff_label.text().startswith("Revision 1 — not approved by QA")

    def com(dialog: signoff_dialogs.ComResultDialog) -> None:
        offered = [dialog.com.itemData(i) for i in range(dialog.com.count())]
        assert offered == ["thin-provisioning", "parity-raid"]  # deduplication was measured
        dialog.com.setCurrentIndex(0)
        dialog.outcome.setCurrentIndex(dialog.outcome.findData("passed"))  # none pre-set
        dialog.text.setPlainText("mgmt CLI: thin pool TP1 exists, disabled for the test")
        dialog.author.setText("T. Tech")

    _answer(monkeypatch, signoff_dialogs.ComResultDialog, com)
    detail.com_button.click()
    assert detail.audit_state.text().startswith("Recorded: ")
    thin = {v.com_id: v for v in com_verdicts(detail.run)}["thin-provisioning"]
    assert thin.state is ComState.PASSED and thin.entry is not None
    assert detail.signoff_label.text().startswith("Revision 2 — not approved by QA")

    def sign(dialog: signoff_dialogs.ApprovalDialog) -> None:
        assert dialog.windowTitle() == "Approve revision 2"
        dialog.text.setPlainText("Reviewed.")
        dialog.author.setText("Q. Auditor")
        dialog.why.setText("simulated demo run, approved as a training record")

    _answer(monkeypatch, signoff_dialogs.ApprovalDialog, sign)
    detail.approve_button.click()
    assert detail.signoff_label.text().startswith("Revision 2 — approved by Q. Auditor")
    kinds = [e.kind for e in audit_entries(detail.database, detail.run.run_id)]
    assert kinds == [AuditKind.COM_RESULT, AuditKind.APPROVAL]
    # what an export of the detail shows
    assert build_content(detail.run).signoff.approval is not None


def test_a_refused_entry_is_explained_in_the_audit_tab(detail, monkeypatch) -> None:
    def empty(dialog: signoff_dialogs.ComResultDialog) -> None:
        dialog.outcome.setCurrentIndex(dialog.outcome.findData("passed"))
        dialog.author.setText("T. Tech")  # no evidence

    _answer(monkeypatch, signoff_dialogs.ComResultDialog, empty)
    detail.com_button.click()
    assert "needs its evidence" in detail.audit_state.text()
    with pytest.raises(AuditError, match="not available in this run's SUT"):
        detail.record_com_result("compression", "passed", "seen", "T. Tech")
