"""Export a stored run as the PDF Test Data Report and the xlsx workbook.

Used by ``storwatt run --out DIR``, ``storwatt report`` and ``--self-test``. Both files are
built from the stored run only (never from live sequencer state), so a report can be rebuilt
at any time and gives the same figures and the same samples hash.
"""

from __future__ import annotations

import errno
import io
import os
import re
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from app.core.paths import data_dir
from app.core.protected import database_files
from app.reports.bundle import build_bundle
from app.reports.content import ReportContent, build_content
from app.reports.pdf import build_pdf
from app.reports.xlsx import build_xlsx
from app.signoff.revisions import hashed
from app.storage.db import Database
from app.storage.record_cache import store_record_hashes
from app.storage.repository import load_run
from app.storage.stored import StoredRun


class ReportError(Exception):
    """A report could not be written (message names the file and what to do); ``written``
    holds the reports that were written all the same."""

    def __init__(self, message: str, written: dict[str, Path] | None = None) -> None:
        super().__init__(message)
        self.written = dict(written or {})


def report_stem(run: StoredRun) -> str:
    """``storwatt-<id8>-<method>``: sortable, tells which run and method at a glance."""
    method = re.sub(r"[^A-Za-z0-9._-]+", "_", run.method_name) or "method"
    return f"storwatt-{run.run_id[:8]}-{method}"


def refuse_destination(path: Path, protected: Iterable[str] = ()) -> None:
    """Raise :class:`ReportError` unless ``path`` may receive a report: a new or existing
    regular file outside the station's own files (its data folder with the journals and the
    default database, and ``protected``: the run's database files).

    A report is written beside its destination and renamed over it, so a device or special
    file named as the destination would be replaced by a regular file: the CLI fuzzer's
    ``--pdf /dev/null`` turned the machine's /dev/null into a PDF, and every later
    ``> /dev/null`` on it failed (issue 12: never destroy data)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ReportError(f"cannot use {path} for a report: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device or special file"
        raise ReportError(f"{path} is {kind}, not a file: a report is only written to a "
                          "regular file (name a new file, e.g. run.pdf)")
    real = path.resolve()
    for place in (str(data_dir()), *protected):
        if place and (real == Path(place).resolve() or real.is_relative_to(Path(place).resolve())):
            raise ReportError(f"{path} belongs to the station ({place}: its database, journals "
                              "or data folder): a report never replaces it")


def _same_file(a: Path, b: Path) -> bool:
    """Two names of one file: equal once resolved, or one existing file (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.samefile(b)
    except OSError:
        return False


def _write(build, content: ReportContent | StoredRun, path: Path) -> Path:
    """Build the report in memory, write it to a temporary file that this call creates
    (``O_EXCL``: never an existing file, never through a link) beside ``path``, make it
    durable and rename it over ``path``: a failed export never leaves a truncated report
    under the final name, and a ``<report>.partial`` planted as a symbolic link to another
    file is never written through (issue 25: it turned the link's target into the PDF).
    The libraries never touch the disk, so a full disk is one clear error from here."""
    buffer = io.BytesIO()
    try:
        build(content, buffer)
    except Exception as exc:  # the library gave up on this run's content: name it, go on
        raise ReportError(f"cannot build {path}: {type(exc).__name__}: {exc}") from exc
    partial = None
    try:
        partial, fd = _exclusive_partial(path)
        with os.fdopen(fd, "wb") as out:
            out.write(buffer.getbuffer())
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except OSError as exc:
        if partial is not None:
            partial.unlink(missing_ok=True)
        why = ("the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
               else exc.strerror or str(exc))
        raise ReportError(f"cannot write {path}: {why}; check the folder exists, is "
                          "writable and has room") from None
    return path


def _exclusive_partial(path: Path) -> tuple[Path, int]:
    """A new file beside ``path`` with a name nobody could have planted in advance, created
    by this call alone (``O_CREAT | O_EXCL`` fails on anything already there, a symbolic
    link included)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    for _ in range(8):
        partial = path.with_name(f"{path.name}.{secrets.token_hex(6)}.partial")
        try:
            return partial, os.open(partial, flags, 0o666)
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, f"no free temporary name beside {path}")


def write_reports(run: StoredRun, pdf: Path | None = None, xlsx: Path | None = None,
                  protected: Iterable[str] = ()) -> dict[str, Path]:
    """Write the requested reports of an already loaded run. One report failing never costs
    the other: both are attempted, then a ReportError names each failure and what was
    written (issue 15: a PDF layout error used to lose the xlsx too). Every destination is
    checked first (:func:`refuse_destination`); a refused one writes nothing at all."""
    protected = tuple(protected)
    if pdf is not None and xlsx is not None and _same_file(Path(pdf), Path(xlsx)):
        raise ReportError(f"--pdf and --xlsx name the same file ({pdf}): the second report "
                          "would replace the first; give each its own file")
    for path in (pdf, xlsx):
        if path is not None:
            refuse_destination(Path(path), protected)
    content = build_content(run)
    written: dict[str, Path] = {}
    failures: list[str] = []
    for kind, build, path in (("pdf", build_pdf, pdf), ("xlsx", build_xlsx, xlsx)):
        if path is None:
            continue
        try:
            written[kind] = _write(build, content, path)
        except ReportError as exc:
            failures.append(f"{kind.upper()} {exc}")
    if failures:
        kept = "; ".join(f"the {kind} {path} was written" for kind, path in written.items())
        raise ReportError("; ".join(failures + ([kept] if kept else [])), written)
    return written


def write_bundle(run: StoredRun, path: Path, protected: Iterable[str] = ()) -> Path:
    """Write the result bundle of an already loaded run (:mod:`app.reports.bundle`) to
    ``path``, checked and written as a report is: never over the station's own files or a
    special file, through an exclusive temporary renamed over the destination."""
    path = Path(path)
    refuse_destination(path, tuple(protected))
    return _write(lambda run_, out: build_bundle(run_, out), run, path)


def export_run(database: Database, run_id: str, out_dir: Path) -> dict[str, Path]:
    """Write ``<stem>.pdf`` and ``<stem>.xlsx`` for ``run_id`` (a prefix is accepted) into
    ``out_dir`` (created if needed); returns ``{"pdf": path, "xlsx": path}``."""
    run, new = hashed(load_run(database, run_id))  # computed once for both reports
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create the report folder {out_dir}: "
                          f"{exc.strerror or exc}") from exc
    stem = report_stem(run)
    written = write_reports(run, out_dir / f"{stem}.pdf", out_dir / f"{stem}.xlsx",
                            protected=database_files(database.url))
    store_record_hashes(database, run.run_id, new)  # once written: a refused export writes nothing
    return written
