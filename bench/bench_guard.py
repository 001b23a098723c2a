"""What the finished-run guard (schema revision 0022, docs/security.md) costs the writers.

* **Lab catch-up.** A station's lab sender sends one finished run of ~100,000 rows in one
  go (a station back after an outage) as a station login, into a throw-away PostgreSQL, with
  the guard's triggers on and disabled, alternately. psycopg sends a batch as one statement
  per row, so the statement-level guard runs once per row.
* **Station file.** The run writer stores a run of ~200,000 samples into SQLite with the
  finished-run triggers and without them, alternately; CPU seconds of this process (the
  writer's thread included), the run itself never waits on it.

Both are informative (issue 39 set no goal); the ratio says what the guard adds.
Run: ``.venv/bin/python -m bench.run_all guard`` (needs the PostgreSQL server binaries).
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the throw-away server helper of the test suite

from tests.support import pg_server
from app.storage.migrations.versions.v0022_finished_runs import CHILD_TABLES
from app.storage.opening import open_database
from app.storage.roles import roles_sql
from app.storage.sender import open_lab, sync
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from bench.figure import Figure

COMMAND = ".venv/bin/python -m bench.run_all guard"
PAIRS = 3
CATCH_UP_SAMPLES = 25_000  # per phase: 100,040 rows in all
FILE_SAMPLES = 50_000  # per phase: ~200,000 samples


def _store(url: str, samples: int) -> float:
    """Store one synthetic run at ``url``; the CPU seconds it took."""
    database = open_database(url)
    try:
        writer = RunWriter(database)
        events = list(full_run(samples_per_phase=samples))
        cpu = time.process_time()
        for event in events:
            writer(event)
        assert writer.close().in_database
        return time.process_time() - cpu
    finally:
        database.close()


def _lab_triggers(owner: sa.Engine, on: bool) -> None:
    with owner.begin() as conn:
        for table in (*CHILD_TABLES, "runs"):
            conn.exec_driver_sql(f"ALTER TABLE {table} {'ENABLE' if on else 'DISABLE'} "
                                 "TRIGGER USER")


def _catch_up(folder: Path) -> dict[bool, list[float]]:
    times: dict[bool, list[float]] = {True: [], False: []}
    with pg_server.postgres_server() as owner_url:
        open_database(owner_url).close()
        owner = sa.create_engine(owner_url)
        with owner.begin() as conn:
            conn.exec_driver_sql(roles_sql(["bench_1"], []))
        station_url = owner_url.replace("//storwatt@", "//bench_1@")
        for i in range(PAIRS * 2):
            guarded = i % 2 == 0
            _lab_triggers(owner, guarded)
            local_url = f"sqlite:///{folder / f'catch-up-{i}.db'}"
            _store(local_url, CATCH_UP_SAMPLES)
            local, lab = open_database(local_url), open_lab(station_url)
            try:
                started = time.perf_counter()
                sync(local, lab)
                times[guarded].append(time.perf_counter() - started)
            finally:
                local.close()
                lab.close()
        _lab_triggers(owner, True)
        owner.dispose()
    return times


def _station_file(folder: Path) -> dict[bool, list[float]]:
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for i in range(PAIRS * 2):
        guarded = i % 2 == 0
        path = folder / f"file-{i}.db"
        open_database(f"sqlite:///{path}").close()
        if not guarded:
            with sqlite3.connect(path) as conn:
                names = [r[0] for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                    "AND name LIKE '%finished%'")]
                for name in names:
                    conn.execute(f"DROP TRIGGER {name}")
            conn.close()
        cpu[guarded].append(_store(f"sqlite:///{path}", FILE_SAMPLES))
    return cpu


def _figures(area: str, unit: str, values: dict[bool, list[float]]) -> list[Figure]:
    on, off = statistics.median(values[True]), statistics.median(values[False])
    return [Figure(f"guard.{area}.guarded", round(on, 2), unit, "informative", None, COMMAND),
            Figure(f"guard.{area}.unguarded", round(off, 2), unit, "reference", None, COMMAND),
            Figure(f"guard.{area}.ratio", round(on / off, 2), "", "informative", None, COMMAND)]


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        figures = _figures("station_file_writer_200k_samples", "s CPU",
                           _station_file(Path(folder)))
        if pg_server.available():  # no server binaries: the lab figures are not measured
            return figures
        return figures + _figures("lab_catch_up_100k_rows", "s", _catch_up(Path(folder)))
