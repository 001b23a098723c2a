"""Every help text points to something that exists (issue 41, seen 7): a ``docs/*.md`` page it
cites is in the repository, and a ``storwatt …`` command it names is a command of the parser —
``run --help`` citing a docs/usage.md that was never written, or ``--thermo-driver`` sending
the technician to ``storwatt instruments`` for the driver list, were both of this class.

The check walks the whole parser tree (every group, sub-command and option) rather than a
hand list, so a new command's help is covered the day it is written."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from app.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOC = re.compile(r"docs/[\w./-]+\.md")
#: ``storwatt`` followed by the words of a command (stops at an option, a value or punctuation)
COMMAND = re.compile(r"storwatt((?: [a-z][a-z-]*)+)")


def texts(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
          ) -> Iterator[tuple[str, str]]:
    """(where, text) of the parser's description and each action's help, recursively."""
    where = " ".join(("storwatt", *path))
    if parser.description:
        yield where, parser.description
    for action in parser._actions:
        if action.help and action.help is not argparse.SUPPRESS:
            yield f"{where} {'/'.join(action.option_strings) or action.dest}", str(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from texts(sub, (*path, name))
            for choice in action._choices_actions:
                if choice.help:
                    yield f"{where} {choice.dest}", str(choice.help)


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found = {path}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= commands(sub, (*path, name))
    return found


def dangling(entries: list[tuple[str, str]], known: set[tuple[str, ...]],
             root: Path) -> list[str]:
    problems = []
    for where, text in entries:
        problems += [f"{where}: {doc} does not exist" for doc in DOC.findall(text)
                     if not (root / doc).is_file()]
        for match in COMMAND.finditer(text):
            words = tuple(match.group(1).split())
            # the longest run of the named words that is a command; the words may go on as
            # prose after a command that has no sub-commands ("storwatt meter drivers lists
            # them"), not after a group ("storwatt instruments lists them" names no command)
            prefix = max((words[:n] for n in range(len(words) + 1) if words[:n] in known),
                         key=len)
            group = any(len(c) > len(prefix) and c[:len(prefix)] == prefix for c in known)
            if not prefix or (group and len(words) > len(prefix)):
                problems.append(f"{where}: 'storwatt {' '.join(words)}' is no command")
    return problems


def test_every_help_text_names_existing_docs_and_commands() -> None:
    parser = build_parser()
    entries = list(texts(parser))
    assert len(entries) > 200  # the walk reached the sub-commands' options
    assert dangling(entries, commands(parser), ROOT) == []


def test_the_check_sees_a_missing_page_and_a_wrong_command(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "real.md").write_text("# real")
    known = {(), ("meter",), ("meter", "drivers"), ("instruments",), ("instruments", "list")}
    entries = [("a", "see docs/real.md and docs/usage.md"),
               ("b", "drivers: storwatt meter drivers lists them"),
               ("c", "storwatt meter drovers"), ("d", "storwatt usage")]
    assert dangling(entries, known, tmp_path) == [
        "a: docs/usage.md does not exist", "c: 'storwatt meter drovers' is no command",
        "d: 'storwatt usage' is no command"]
