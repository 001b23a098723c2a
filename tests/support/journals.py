"""Run journals written as the station's writer writes them, for the import tests: a whole
synthetic run, one record per event (``app.storage.journal``)."""

from __future__ import annotations

from pathlib import Path

from app.sequencer import events as ev
from app.storage.synthetic import full_run


def journal_of_full_run(url: str, run_id: str) -> tuple[Path, list[ev.RunEvent], int]:
    """A journal holding a whole synthetic run, one record per event; returns its path, the
    events, and the byte offset where the last record (RunFinished) starts."""
    from app.storage.journal import JournalFile, journal_path, new_header, reserve_bytes

    events = [e for e in full_run(run_id=run_id) if not isinstance(e, ev.Progress)]
    journal = JournalFile.create(journal_path(run_id),
                                 new_header(run_id, url, reserve_bytes(240.0, 2.0)))
    for seq, event in enumerate(events[:-1], start=1):
        journal.append([(seq, event)])
    last_starts = journal.end
    journal.append([(len(events), events[-1])])
    journal.close()
    return journal.path, events, last_starts


def power_count(events: list[ev.RunEvent]) -> int:
    return sum(len(e.samples) for e in events if isinstance(e, ev.PowerSamples))
