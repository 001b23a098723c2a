"""A method file is a regular file of bounded size, read once (issue 25, method-file minors):
a ``base`` loop written through ``../`` (OSError traceback), 5000-deep arrays
(RecursionError), a FIFO (every command hung), a link to a device (MemoryError at 4 GiB).
Each is now one MethodError naming the file; special files are only ones the test makes in
its own temporary folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.cli.main import main
from app.method.loader import MethodError, load_method_file
from tests.support.bounded import outcome_within


def _load_within(path: Path) -> BaseException | None:
    return outcome_within(lambda: load_method_file(path), f"loading {path}")


def test_a_base_loop_through_dot_dot_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "methods"
    folder.mkdir()
    (folder / "a.toml").write_text('base = "../methods/a.toml"\ncompliant = false\n')
    exc = _load_within(folder / "a.toml")
    assert isinstance(exc, MethodError) and "circular 'base' chain" in str(exc), repr(exc)


def test_deeply_nested_arrays_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    exc = _load_within(path)
    assert isinstance(exc, MethodError) and "nested too deeply" in str(exc), repr(exc)
    path.write_text("x = " + "[" * 40 + "]" * 40 + "\n")  # parses, still no method
    exc = _load_within(path)
    assert isinstance(exc, MethodError) and "nested more than" in str(exc), repr(exc)


def test_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "method.toml"
    os.mkfifo(fifo)
    try:
        exc = _load_within(fifo)
    finally:  # before: the open waited for a writer for ever; let a stuck reader go
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert isinstance(exc, MethodError) and "not a regular file" in str(exc), repr(exc)


def test_an_oversized_file_behind_a_link_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:  # sparse: the bound is what is checked, not the disk
        fh.truncate(8 << 20)
    link = tmp_path / "method.toml"
    link.symlink_to(big)
    exc = _load_within(link)
    assert isinstance(exc, MethodError) and "larger than 1 MiB" in str(exc), repr(exc)


def test_a_character_device_node_is_refused(tmp_path: Path) -> None:
    node = tmp_path / "zero.toml"
    try:  # this folder's own node for the zero device; reading it never ends
        os.mknod(node, stat.S_IFCHR | 0o400, os.makedev(1, 5))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    exc = _load_within(node)
    assert isinstance(exc, MethodError) and "not a regular file" in str(exc), repr(exc)


def test_the_cli_says_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["methods", "show", str(path)]) == 1
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err
