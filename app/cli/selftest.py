"""``storwatt --self-test``: prove an installation works end to end, without instruments.

A lab PC gets StorWatt as a frozen bundle; a missing method file, migration script, VISA
backend or report font only shows up when that code path runs. The self-test therefore runs
every layer once — method files, database migrations, a whole (abbreviated, non-compliant)
``smoke`` sequence on the simulated lab over its loopback meter simulators, and both report
writers — in a throw-away folder, printing one line per step so a technician can tell support
exactly which step failed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.method.loader import all_methods
from app.method.taxonomy import load_taxonomy
from app.core.records import RunConfig, RunStatus
from app.reports import export
from app.station.session import open_session
from app.storage.migrate import schema_version
from app.storage.opening import open_database
from drivers.clock import Clock

SMOKE_METHOD = "smoke"
SMOKE_TAXONOMY = "online-3"
# Leading bytes of a well-formed file: a PDF header, and the ZIP container an xlsx is.
REPORT_MAGIC = {"pdf": b"%PDF-", "xlsx": b"PK\x03\x04"}


class SelfTestError(Exception):
    """A self-test step found the installation broken; the message says what is wrong."""


@dataclass(frozen=True)
class StepResult:
    name: str
    ok: bool
    detail: str
    seconds: float

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return f"self-test {mark} {self.name:<9} {self.detail} ({self.seconds:.1f} s)"


@dataclass
class _Context:
    """What one step hands to the next (database URL, run id, report folder)."""

    work_dir: Path
    lab: str
    clock: Clock | None
    db_url: str = ""
    run_id: str = ""


def _check_methods(ctx: _Context) -> str:
    """Every shipped method file and each one's taxonomy file parse and validate."""
    methods = all_methods()
    if SMOKE_METHOD not in methods:
        raise SelfTestError(f"method {SMOKE_METHOD!r} is missing from the shipped method files "
                            f"(found: {', '.join(sorted(methods)) or 'none'}); reinstall")
    for method in methods.values():
        load_taxonomy(method)
    return f"{len(methods)} methods loaded ({', '.join(sorted(methods))})"


def _check_database(ctx: _Context) -> str:
    ctx.db_url = f"sqlite:///{(ctx.work_dir / 'selftest.db').as_posix()}"
    database = open_database(ctx.db_url)
    try:
        return f"schema {schema_version(database)} at {ctx.db_url}"
    finally:
        database.close()


def _check_run(ctx: _Context) -> str:
    config = RunConfig(method=SMOKE_METHOD, taxonomy=SMOKE_TAXONOMY, lab=ctx.lab)
    session = open_session(config, db_url=ctx.db_url, clock=ctx.clock)
    try:
        status = session.run()
    finally:
        session.database.close()
    ctx.run_id = session.run_id
    if status is not RunStatus.COMPLETED:
        raise SelfTestError(f"smoke run {ctx.run_id[:8]} ended {status}, not COMPLETED")
    metrics = session.sequencer.metrics
    valid = sum(1 for m in metrics if m.valid)
    return (f"smoke run {ctx.run_id[:8]} on lab {ctx.lab!r} COMPLETED, "
            f"{valid}/{len(metrics)} metrics valid")


def _check_reports(ctx: _Context) -> str:
    database = open_database(ctx.db_url)
    try:
        written = export.export_run(database, ctx.run_id, ctx.work_dir / "reports")
    finally:
        database.close()
    sizes = []
    for kind, magic in REPORT_MAGIC.items():
        sizes.append(f"{kind} {_verify_report(written.get(kind), kind, magic) // 1024} KiB")
    return ", ".join(sizes)


def _verify_report(path: Path | None, kind: str, magic: bytes) -> int:
    """Size of a written report after checking it exists, is non-empty and looks like ``kind``."""
    if path is None:
        raise SelfTestError(f"the exporter wrote no {kind} report")
    if not path.is_file() or path.stat().st_size == 0:
        raise SelfTestError(f"{kind} report {path} is missing or empty")
    with path.open("rb") as fh:
        if fh.read(len(magic)) != magic:
            raise SelfTestError(f"{kind} report {path} is not a valid {kind} file")
    return path.stat().st_size


STEPS: tuple[tuple[str, Callable[[_Context], str]], ...] = (
    ("methods", _check_methods),
    ("database", _check_database),
    ("run", _check_run),
    ("reports", _check_reports),
)


def _run_step(name: str, step: Callable[[_Context], str], ctx: _Context) -> StepResult:
    started = time.monotonic()
    try:
        detail = step(ctx)
    except Exception as exc:  # noqa: BLE001 - the self-test's job is to name any failure
        message = str(exc) or type(exc).__name__
        if not isinstance(exc, SelfTestError):
            message = f"{type(exc).__name__}: {message}"
        return StepResult(name, False, message, time.monotonic() - started)
    return StepResult(name, True, detail, time.monotonic() - started)


def run_steps(work_dir: Path, *, out: TextIO, lab: str = "sim",
              clock: Clock | None = None) -> list[StepResult]:
    """Run the steps in order inside ``work_dir``, printing each; stops at the first failure."""
    ctx = _Context(work_dir=work_dir, lab=lab, clock=clock)
    results: list[StepResult] = []
    for name, step in STEPS:
        result = _run_step(name, step, ctx)
        results.append(result)
        print(result.line(), file=out, flush=True)
        if not result.ok:
            break
    return results


def run_self_test(*, out: TextIO | None = None, work_dir: Path | None = None,
                  lab: str = "sim", clock: Clock | None = None) -> int:
    """Exit status of the self-test: 0 when every step passed, 1 otherwise.

    ``work_dir`` keeps the database and reports (default: a temporary folder, removed after);
    ``lab`` and ``clock`` let tests run the same steps on ``sim-direct`` with a fake clock.
    """
    out = out or sys.stdout
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
        results = run_steps(work_dir, out=out, lab=lab, clock=clock)
    else:
        # ignore_cleanup_errors: on Windows a file a virus scanner still holds must not turn
        # a passed self-test into a traceback.
        with tempfile.TemporaryDirectory(prefix="storwatt-selftest-",
                                         ignore_cleanup_errors=True) as tmp:
            results = run_steps(Path(tmp), out=out, lab=lab, clock=clock)
    failed = next((r for r in results if not r.ok), None)
    total = sum(r.seconds for r in results)
    if failed is not None:
        print(f"self-test FAILED at step '{failed.name}': {failed.detail}", file=out)
        return 1
    print(f"self-test passed: {len(results)} steps in {total:.1f} s", file=out)
    return 0
