"""The installed ``storwatt`` command: the domain core's command groups plus ``storwatt gui``.

``app`` must stay free of Qt and of ``ui`` (tests/test_architecture.py), so the command that
opens the window is registered from this side of the layering: ``pyproject.toml`` and the
frozen entry points run :func:`main` here, which hands ``app.cli.main`` one more group. Qt
loads only when ``gui`` runs, so ``storwatt --version`` stays fast (tests/test_cli_startup.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.cli import main as core
from app.core.records import LAB_KINDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the station's graphical interface",
                       description="Open the technician's station window: new-run wizard, "
                       "live run view, recent runs.")
    p.add_argument("--lab", choices=LAB_KINDS, default="sim",
                   help="lab the wizard's 'simulated' choice uses (default: sim)")
    p.add_argument("--db", help="database URL (default: the station's SQLite file)")
    p.add_argument("--exit-after-first-paint", action="store_true",
                   help="print when the window was first painted and quit (start-up bench, "
                   "bench/bench_startup.py)")
    p.set_defaults(func=gui_command)


def gui_command(args: argparse.Namespace) -> int:
    try:
        from ui.app import run_gui
    except ImportError as exc:
        print(f"storwatt gui: the graphical interface is not available ({exc}); "
              "use 'storwatt run' for a headless run", file=sys.stderr)
        return 1
    return int(run_gui(lab=args.lab, db_url=args.db,
                       exit_after_first_paint=args.exit_after_first_paint))


#: ``gui`` first: it is what a technician types most
COMMAND_GROUPS = (register, *core.COMMAND_GROUPS)


def main(argv: Sequence[str] | None = None) -> int:
    return core.main(argv, COMMAND_GROUPS)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
