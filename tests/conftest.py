"""Test-wide set-up: a private data directory so no test touches the user's station DB."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helpers such as pg_server

# the offscreen platform's one screen is 800×800; give it the lab laptops' two screens
# (1366×768, 1280×720) so windows are sized and checked against a real available geometry
# (tests/support/laptop_screens.py). Set before any QApplication exists.
if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = ("offscreen:configfile="
                                     f"{Path(__file__).parent / 'fixtures' / 'laptop-screens.json'}")

pytest_plugins = ["suite_guards"]  # stuck dialogs, hard backstop, slow tests named


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
