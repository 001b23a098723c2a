"""A stored run without a histogram says so in stored words (issue 28): a FAILED run's detail
said "No histogram yet: one appears when…", the live view's promise of one to come."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("pytestqt")

from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from ui.history.detail import RunDetailView


def test_a_failed_run_without_histograms_never_promises_one(qtbot, tmp_path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'h.db'}")
    try:
        events = [e for e in full_run(1000.0) if not isinstance(e, ev.HistogramReady)]
        events[-1] = replace(events[-1], status=RunStatus.FAILED, error="power meter lost")
        writer = RunWriter(database)
        for event in events:
            writer(event)
        assert writer.flush(10)
        writer.close()
        view = RunDetailView(database, events[0].run_id)
        qtbot.addWidget(view)
        note = view.plots.hist_note.text()
        assert "No histogram yet" not in note
        assert note.startswith("This run stored no response-time histogram")
        view.phase_choice.setCurrentIndex(1)
        assert view.plots.hist_note.text().startswith("This phase stored no")
    finally:
        database.close()
