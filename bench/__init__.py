"""Performance benchmarks: ``make bench`` runs them all and rewrites docs/performance.md.

A bench runs stations, writers and reports, which keep run journals and run locks in the
station's data folder: unless the caller names one (``STORWATT_DATA_DIR``), the benches get a
folder of their own for the process and its children, removed at exit. Before, they wrote into
the user's own data folder (a 24 h memory bench left 200 MB journals there).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "STORWATT_DATA_DIR" not in os.environ:
    _DATA_DIR = tempfile.mkdtemp(prefix="storwatt-bench-data-")
    os.environ["STORWATT_DATA_DIR"] = _DATA_DIR
    atexit.register(shutil.rmtree, _DATA_DIR, ignore_errors=True)
