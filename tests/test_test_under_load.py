"""scripts/test-under-load.sh (issue 36): its options, and that its burners start, burn CPU and
are gone when it ends — with ``--dry-run``, which clones and burns but runs no suite (the whole
run under load is the lead's, before any change to the test machinery: README, "Testing")."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test-under-load.sh"


def _run(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp)}, timeout=budget_s(60))


@pytest.mark.process
@pytest.mark.parametrize(("args", "error"), [
    (["--burners"], "--burners needs a number (e.g. --burners 2)"),
    (["--burners", "0"], "--burners must be a whole number from 1 to 99, not '0'"),
    (["--burners", "two"], "--burners must be a whole number from 1 to 99, not 'two'"),
    (["--fast"], "unknown option '--fast' (see --help)"),
])
def test_a_wrong_option_is_one_line_naming_it(args: list[str], error: str,
                                              tmp_path: Path) -> None:
    result = _run(*args, tmp=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (
        2, f"test-under-load: {error}\n", "")
    assert list(tmp_path.iterdir()) == []  # refused before cloning or burning anything


@pytest.mark.process
def test_help_lists_every_option(tmp_path: Path) -> None:
    result = _run("--help", tmp=tmp_path)
    assert result.returncode == 0
    for option in ("--burners N", "--reuse-venv", "--keep", "--dry-run"):
        assert option in result.stdout


def _pids(line_start: str, stdout: str) -> list[int]:
    line = next(line for line in stdout.splitlines() if line_start in line)
    return [int(pid) for pid in re.findall(r"\d+", line.split(line_start)[1])]


@pytest.mark.process
def test_a_dry_run_clones_head_burns_on_each_burner_and_stops_them_all(tmp_path: Path) -> None:
    result = _run("--dry-run", "--burners", "3", "--", "TEST_WORKERS=4", tmp=tmp_path)
    assert result.returncode == 0, result.stderr
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True, timeout=budget_s(30)).stdout.strip()
    assert f"HEAD {head[:12]} cloned to {tmp_path}" in result.stdout
    started = _pids("3 burners: ", result.stdout)
    assert len(started) == 3 and "every burner is burning CPU" in result.stdout
    assert "make test TEST_WORKERS=4)" in result.stdout  # extra make variables passed on
    assert _pids("burners stopped: ", result.stdout) == started
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped by the script: no burner outlives it
    assert list(tmp_path.iterdir()) == []  # the clone removed (no --keep)


@pytest.mark.process
def test_reusing_the_venv_is_explicit_and_never_rebuilds_it(tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv in this checkout to reuse")
    result = _run("--dry-run", "--burners", "1", "--reuse-venv", "--keep", tmp=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "make test -o .venv/.installed" in result.stdout
    clone = next(tmp_path.iterdir()) / "storwatt"
    assert f"clone kept in {clone}" in result.stdout
    assert (clone / ".venv").resolve() == (ROOT / ".venv").resolve()
