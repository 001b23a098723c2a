"""Frozen entry point of ``storwatt-gui`` (Windows, no console window): ``storwatt gui``.

The Start-menu shortcut runs this executable so technicians do not get a stray console;
extra arguments (``--lab``, ``--db``) pass through to the ``gui`` command.
"""

import multiprocessing
import sys

from ui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main(["gui", *sys.argv[1:]]))
