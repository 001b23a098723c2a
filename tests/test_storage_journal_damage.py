"""One damaged byte in a run journal costs one record (issue 25, item 4 and the header minor).

Before: one flipped byte in record 33 of 99 imported 33 events, deleted the file and lost the
other 66 (23 power samples), blaming a torn tail. Now every record carries a mark the reader
finds again behind a damaged one: the damaged record is skipped and counted, every intact one
after it imported, and a journal holding anything not imported is kept (``<name>.damaged``).
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.journal import (HEADER_SIZE, MAGIC, JournalFile, journal_dir, journal_path,
                                 new_header, read_journal, reserve_bytes)
from app.storage.recover import recover
from app.storage.synthetic import full_run
from app.storage.repository import load_run


def _journal(url: str, run_id: str) -> tuple[Path, list[ev.RunEvent], list[int]]:
    """A journal of a whole synthetic run, one record per event; the offset of each record."""
    events = [e for e in full_run(run_id=run_id) if not isinstance(e, ev.Progress)]
    journal = JournalFile.create(journal_path(run_id),
                                 new_header(run_id, url, reserve_bytes(240.0, 2.0)))
    starts = []
    for seq, event in enumerate(events, start=1):
        starts.append(journal.end)
        journal.append([(seq, event)])
    journal.close()
    return journal.path, events, starts


def _power(events: list[ev.RunEvent]) -> int:
    return sum(len(e.samples) for e in events if isinstance(e, ev.PowerSamples))


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["payload", "length", "mark"])
def test_one_damaged_record_is_skipped_and_every_later_one_imported(tmp_path: Path,
                                                                    where: str) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path, events, starts = _journal(url, "damaged-run")
    hit = next(i for i, e in enumerate(events)  # a power record a third of the way in
               if i >= len(events) // 3 and isinstance(e, ev.PowerSamples))
    _flip(path, starts[hit] + {"payload": 20, "length": 5, "mark": 1}[where])

    contents = read_journal(path)
    assert len(contents.records) == len(events) - 1
    assert contents.damaged == ((starts[hit], starts[hit + 1] - starts[hit]),)
    database = open_database(url, recover_journals=False)
    (result,) = recover(database).imported
    assert result.applied == len(events) - 1  # before: only the records before the damage
    lost = len(events[hit].samples)
    assert result.power_samples == _power(events) - lost
    assert "1 damaged record stretch could not be read and was skipped" in result.describe()
    run = load_run(database, "damaged-run")
    assert len(run.power) == _power(events) - lost
    assert run.status is RunStatus.COMPLETED  # RunFinished, after the damage, was imported
    kept = path.with_name(path.name + ".damaged")
    assert not path.exists() and kept.exists() and result.kept_as == kept
    assert f"the journal is kept as {kept}" in result.describe()
    assert recover(database).imported == ()  # kept out of the import's way


def test_an_intact_journal_is_deleted_once_imported(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path, events, _ = _journal(url, "intact-run")
    (result,) = recover(open_database(url, recover_journals=False)).imported
    assert result.applied == len(events) and result.kept_as is None and not path.exists()
    assert list(journal_dir().iterdir()) == []


def test_damage_in_the_last_record_is_a_tail_kept_with_the_journal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path, events, starts = _journal(url, "tail-run")
    _flip(path, starts[-1] + 20)
    (result,) = recover(open_database(url, recover_journals=False)).imported
    assert result.applied == len(events) - 1 and result.torn_at == starts[-1]
    assert result.damaged == () and result.kept_as is not None and result.kept_as.exists()


def test_a_journal_header_with_a_valid_crc_but_missing_keys_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    open_database(url).close()
    text = json.dumps({"run_id": "no-database-key"}).encode()
    head = struct.pack("<16sHII", MAGIC, 1, len(text), zlib.crc32(text)) + text
    journal_dir().mkdir(parents=True, exist_ok=True)
    bad = journal_dir() / "no-database-key.swj"
    bad.write_bytes(head + bytes(HEADER_SIZE - len(head)) + bytes(64))

    assert main(["runs", "list", "--db", url]) == 0  # before: KeyError traceback
    assert main(["db", "recover", "--db", url]) == 1  # a journal it could not import
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert f"{bad}: NOT imported, the journal is kept: the header of run journal {bad} " \
           "is damaged (no 'database')" in captured.out
    assert bad.exists()
