"""``python -m ui [--lab sim] [--db URL]``: the station GUI without the CLI wrapper."""

from __future__ import annotations

import argparse
import sys

from ui.app import run_gui

if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(prog="python -m ui")
    parser.add_argument("--lab", default="sim")
    parser.add_argument("--db")
    args = parser.parse_args()
    sys.exit(run_gui(args.lab, args.db))
