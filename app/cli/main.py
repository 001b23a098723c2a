"""Entry point of the ``storwatt`` command.

Sub-command groups live in ``app/cli/cmd_*.py``; each exposes ``register(subparsers)`` and sets
``func`` on its parser. They are discovered here so adding a group touches one file only.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import app
import app.cli as cli_pkg


def command_modules() -> list[str]:
    """Names of the ``app.cli.cmd_*`` modules, sorted for a stable ``--help``."""
    return sorted(
        f"app.cli.{m.name}" for m in pkgutil.iter_modules(cli_pkg.__path__)
        if m.name.startswith("cmd_")
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storwatt",
        description="StorWatt: storage power-efficiency test station (SNIA Emerald method).",
    )
    parser.add_argument("--version", action="version", version=f"storwatt {app.__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="load the methods, run the smoke sequence on the simulated lab "
                        "into a temporary database and write a PDF + xlsx; exit 0 on success")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules():
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.self_test:
        from app.selftest import run_self_test

        return run_self_test()
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
