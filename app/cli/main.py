"""Entry point of the ``storwatt`` command line of the domain core.

Sub-command groups live in ``app/cli/cmd_*.py``; each exposes ``register(subparsers)`` and sets
``func`` on its parser. They are imported by name here (not discovered at run time) so the
layering test sees every edge, and registering them must stay cheap: ``storwatt --version``
and ``--help`` build every parser, so a group imports its heavy libraries (SQLAlchemy,
reportlab, numpy, pydantic …) inside its command functions (tests/test_cli_startup.py).

The installed ``storwatt`` adds the GUI's own group on top (:mod:`ui.cli`); ``app`` never
imports ``ui``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import app
from app.cli.safe_output import terminal_safe_streams
from app.cli import (cmd_audit, cmd_db, cmd_family, cmd_instruments, cmd_methods, cmd_rails,
                     cmd_report, cmd_run, cmd_runs, cmd_station)
from app.core.paths import DataDirError


#: a group's ``register(subparsers)``: adds its sub-commands to ``storwatt``
Register = Callable[[argparse._SubParsersAction], None]

#: in ``--help`` order
COMMAND_GROUPS: tuple[Register, ...] = (
    cmd_audit.register, cmd_db.register, cmd_family.register, cmd_instruments.register,
    cmd_methods.register, cmd_rails.register, cmd_report.register, cmd_run.register,
    cmd_runs.register, cmd_station.register)


def build_parser(groups: Sequence[Register] = COMMAND_GROUPS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storwatt",
        description="StorWatt: storage power-efficiency test station (SNIA Emerald method).",
    )
    parser.add_argument("--version", action="version", version=f"storwatt {app.__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="load the methods, run the smoke sequence on the simulated lab "
                        "into a temporary database and write a PDF + xlsx; exit 0 on success")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in groups:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None,
         groups: Sequence[Register] = COMMAND_GROUPS) -> int:
    """Run one command; whatever it prints (stored text of other stations, typed values
    quoted in a refusal) reaches the terminal as text, never as control (``safe_output``)."""
    with terminal_safe_streams():
        return _command(argv, groups)


def _command(argv: Sequence[str] | None, groups: Sequence[Register]) -> int:
    parser = build_parser(groups)
    args = parser.parse_args(argv)
    if args.self_test:
        from app.cli.selftest import run_self_test

        return run_self_test()
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except DataDirError as exc:  # wherever a command first needed the data folder
        print(f"storwatt {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
