"""``storwatt gui``: open the technician's station window (``make run`` with a display).

``app`` must stay free of Qt (tests/test_architecture.py scans imports with ast), so the GUI
package is loaded by name at call time, never imported statically here.
"""

from __future__ import annotations

import argparse
import importlib

from app.labs import LAB_KINDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the station's graphical interface",
                       description="Open the technician's station window: new-run wizard, "
                       "live run view, recent runs.")
    p.add_argument("--lab", choices=LAB_KINDS, default="sim",
                   help="lab the wizard's 'simulated' choice uses (default: sim)")
    p.add_argument("--db", help="database URL (default: the station's SQLite file)")
    p.set_defaults(func=gui_command)


def gui_command(args: argparse.Namespace) -> int:
    try:
        launcher = importlib.import_module("ui.app")
    except ImportError as exc:
        print(f"storwatt gui: the graphical interface is not available ({exc}); "
              "use 'storwatt run' for a headless run")
        return 1
    return int(launcher.run_gui(lab=args.lab, db_url=args.db))
