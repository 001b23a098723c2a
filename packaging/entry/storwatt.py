"""Frozen entry point of ``storwatt`` (console): the same ``main`` the pip script runs."""

import multiprocessing
import sys

from ui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a frozen child process must not rerun the CLI
    sys.exit(main())
