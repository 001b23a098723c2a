"""Test-wide set-up: a private data directory so no test touches the user's station DB."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helpers such as pg_server

pytest_plugins = ["suite_guards"]  # stuck dialogs, hard backstop, slow tests named


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
