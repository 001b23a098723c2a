"""Export a stored run's PDF report, xlsx workbook and result bundle from the GUI.

The save dialog starts in the folder the technician last exported to (kept in QSettings), or
in their documents folder the first time — never in the process's working directory, which for
a station started from a checkout is the source tree. After a save the bar says where the file
went and offers to open that folder; after a result bundle it also says how an auditor checks
it — the ``storwatt-verify`` command line, with the record SHA-256 the signed PDF prints in
every page's footer (issue 37). The report libraries load at the first export, not with the
station's first window.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QMessageBox, QPushButton,
                               QWidget)

from app.storage.errors import StorageError
from app.storage.stored import StoredRun

FOLDER_KEY = "export/folder"
#: (parent, caption, proposed path, filter) → the chosen path, "" when cancelled
SaveDialog = Callable[[QWidget, str, str, str], tuple[str, str]]
KINDS = {"pdf": "PDF report", "xlsx": "xlsx workbook",
         "zip": "result bundle for storwatt-verify"}
#: what HASH is in the verify command, and what the command answers (docs/export-format.md)
VERIFY_HINT = ("HASH: the record SHA-256 in the footer of every page of the signed PDF report "
               "(\"Revision N — record SHA-256 …\"). storwatt-verify is installed with StorWatt "
               "and runs on any PC (also: python3 storwatt_verify.py, standard library only); "
               "exit status 0 agrees, 1 disagrees, 2 not a readable bundle.")


def verify_command(bundle: Path) -> str:
    """The command line that checks ``bundle``, quoted for this PC's shell."""
    quoted = f'"{bundle}"' if os.name == "nt" else shlex.quote(str(bundle))
    return f"storwatt-verify {quoted} --record-sha256 HASH"


def documents_folder() -> Path:
    """The user's documents folder, or home when the desktop names none or it does not exist
    (a dialog pointed at a missing folder would fall back to the working directory)."""
    found = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return Path(found) if found and Path(found).is_dir() else Path.home()


def start_folder(settings: QSettings) -> Path:
    """The last folder exported to, if it still exists; else the documents folder."""
    last = str(settings.value(FOLDER_KEY, "") or "")
    return Path(last) if last and Path(last).is_dir() else documents_folder()


def ask_report_path(parent: QWidget, settings: QSettings, run: StoredRun, suffix: str,
                    ask: SaveDialog = QFileDialog.getSaveFileName) -> Path | None:
    """Ask where to save ``run``'s report; remembers the chosen folder for next time."""
    from app.reports.export import report_stem  # reportlab and xlsxwriter: first export only

    kind = KINDS[suffix]
    proposed = start_folder(settings) / f"{report_stem(run)}.{suffix}"
    name, _ = ask(parent, f"Export {kind}", str(proposed), f"{kind} (*.{suffix})")
    if not name:
        return None
    path = Path(name)
    settings.setValue(FOLDER_KEY, str(path.parent))
    return path


def open_folder(path: Path) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class ReportExportBar(QWidget):
    """Export PDF / Export xlsx / Export bundle buttons, then "Saved to … [Open folder]".

    ``load`` returns the stored run to export, as it is now (called at every export, so a QA
    disposition added meanwhile is in the report)."""

    #: a run's reports are offered (True) or withdrawn (False): the File menu follows
    offered = Signal(bool)

    def __init__(self, settings: QSettings, parent: QWidget | None = None, *,
                 ask: SaveDialog = QFileDialog.getSaveFileName,
                 opener: Callable[[Path], None] = open_folder) -> None:
        super().__init__(parent)
        self.settings, self.ask, self.opener = settings, ask, opener
        self._load: Callable[[], StoredRun] | None = None
        self.saved: Path | None = None
        self.pdf_button = QPushButton("Export &PDF…")
        self.xlsx_button = QPushButton("Export &xlsx…")
        self.pdf_button.clicked.connect(lambda: self.export("pdf"))
        self.xlsx_button.clicked.connect(lambda: self.export("xlsx"))
        # the raw data, method and manifest an auditor checks with storwatt-verify (issue 29)
        self.bundle_button = QPushButton("Export &bundle…")
        self.bundle_button.setToolTip("A zip of every sample, slice and interval with the method "
                                      "as run, for an independent check: storwatt-verify "
                                      "FILE.zip --record-sha256 HASH. " + VERIFY_HINT)
        self.bundle_button.clicked.connect(lambda: self.export("zip"))
        self.saved_label = QLabel("")
        self.saved_label.setAccessibleName("Export result")
        self.saved_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open &folder")
        self.open_button.clicked.connect(lambda: self.saved and self.opener(self.saved.parent))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.pdf_button, self.xlsx_button, self.bundle_button, self.saved_label,
                       self.open_button):
            layout.addWidget(widget)
        layout.addStretch(1)
        self.set_run(None)

    def set_run(self, load: Callable[[], StoredRun] | None) -> None:
        """Offer export for the run ``load`` returns; ``None`` hides the bar (run going on)."""
        self._load, self.saved = load, None
        self.saved_label.clear()
        self.open_button.hide()
        self.setVisible(load is not None)
        self.offered.emit(load is not None)

    def export(self, suffix: str, path: Path | None = None) -> Path | None:
        if self._load is None:
            return None
        from app.reports.export import (ReportError, write_bundle,  # first export only
                                        write_reports)

        try:
            run = self._load()
            path = path or ask_report_path(self, self.settings, run, suffix, self.ask)
            if path is None:
                return None
            written = (write_bundle(run, Path(path)) if suffix == "zip"
                       else write_reports(run, **{suffix: Path(path)})[suffix])
        except (ReportError, StorageError, OSError) as exc:
            QMessageBox.warning(self, "Export failed", str(exc))
            return None
        self.saved = written
        if suffix == "zip":  # the command is selectable: copied into a terminal as it stands
            self.saved_label.setText(f"Saved to {written} — verify: {verify_command(written)}")
            self.saved_label.setToolTip(VERIFY_HINT)
        else:
            self.saved_label.setText(f"Saved to {written}")
            self.saved_label.setToolTip(str(written))
        self.open_button.show()
        return written
