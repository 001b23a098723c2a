"""scripts/install-system-deps.sh: what `make run`, `make test` and `.ci/run` do about Debian
packages, checked with stand-ins for dpkg-query, apt-get, sudo and id on PATH, so nothing is
ever installed by the test and the root / sudo / neither branches all run on any machine."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "install-system-deps.sh"
BASH = "/bin/bash"

STUBS = {
    # installed packages come from $STUB_INSTALLED, one "name|provides" per line
    "dpkg-query": 'while IFS="|" read -r n p; do echo "ii |$n|$p"; done < "$STUB_INSTALLED"\n',
    "apt-get": 'echo "apt-get $*" >> "$STUB_LOG"\n',
    # `sudo -n true` answers whether sudo works without a password; anything else is logged
    "sudo": ('if [ "$*" = "-n true" ]; then exit $((1 - STUB_SUDO_OK)); fi\n'
             'echo "sudo $*" >> "$STUB_LOG"\n'),
    "id": 'echo "$STUB_UID"\n',
}


def packages() -> list[str]:
    return subprocess.run([BASH, str(SCRIPT), "--list"], check=True, capture_output=True,
                          text=True).stdout.split()


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    calls: list[str]  # what reached apt-get or sudo, one line per call


def run_script(tmp_path: Path, installed: list[str], *, uid: int, sudo_ok: bool,
               with_sudo: bool = True, args: tuple[str, ...] = ()) -> Outcome:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in STUBS.items():
        if name == "sudo" and not with_sudo:
            continue
        stub = bin_dir / name
        stub.write_text(f"#!{BASH}\n{body}")
        stub.chmod(0o755)
    (tmp_path / "installed").write_text("".join(f"{p}\n" for p in installed))
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_INSTALLED": str(tmp_path / "installed"),
           "STUB_LOG": str(log), "STUB_UID": str(uid), "STUB_SUDO_OK": str(int(sudo_ok))}
    if not with_sudo:  # a system without sudo: only the stubs' folder and a private awk
        (bin_dir / "awk").symlink_to(_which("awk"))
        env["PATH"] = str(bin_dir)
    result = subprocess.run([BASH, str(SCRIPT), *args], env=env, capture_output=True, text=True,
                            timeout=budget_s(30))
    return Outcome(result.returncode, result.stdout, result.stderr, log.read_text().splitlines())


def _which(tool: str) -> str:
    for folder in ("/usr/bin", "/bin"):
        if os.path.exists(f"{folder}/{tool}"):
            return f"{folder}/{tool}"
    pytest.skip(f"no {tool} on this machine")


def all_but(*missing: str) -> list[str]:
    return [p for p in packages() if p not in missing]


@pytest.mark.process
def test_the_list_names_what_qt_and_the_suite_need() -> None:
    names = packages()
    assert {"libxcb-cursor0", "fio", "xvfb", "xauth", "x11-utils", "poppler-utils", "postgresql",
            "binutils", "dpkg", "python3-venv", "make"} <= set(names)
    assert len(names) == len(set(names))


@pytest.mark.process
def test_nothing_runs_when_everything_is_installed(tmp_path: Path) -> None:
    out = run_script(tmp_path, packages(), uid=1000, sudo_ok=True)
    assert (out.returncode, out.calls, out.stderr) == (0, [], "")


@pytest.mark.process
def test_a_provided_package_counts_as_installed(tmp_path: Path) -> None:
    """Ubuntu 24.04 renamed libglib2.0-0 to libglib2.0-0t64, which provides the old name."""
    installed = all_but("libglib2.0-0") + ["libglib2.0-0t64|libglib2.0-0 (= 2.80.0-6), foo"]
    out = run_script(tmp_path, installed, uid=0, sudo_ok=False)
    assert (out.returncode, out.calls) == (0, [])


@pytest.mark.process
def test_root_installs_the_missing_ones_with_apt_get(tmp_path: Path) -> None:
    out = run_script(tmp_path, all_but("libxcb-cursor0", "fio"), uid=0, sudo_ok=False)
    assert out.returncode == 0
    assert out.calls == ["apt-get update -qq", "apt-get install -y -qq fio libxcb-cursor0"]


@pytest.mark.process
def test_a_user_with_passwordless_sudo_installs_through_sudo(tmp_path: Path) -> None:
    out = run_script(tmp_path, all_but("libxcb-cursor0"), uid=1000, sudo_ok=True)
    assert out.returncode == 0
    assert out.calls == [
        "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -qq",
        "sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxcb-cursor0"]


@pytest.mark.process
@pytest.mark.parametrize("with_sudo", [True, False], ids=["sudo-asks-a-password", "no-sudo"])
def test_otherwise_one_line_says_the_exact_command(tmp_path: Path, with_sudo: bool) -> None:
    out = run_script(tmp_path, all_but("libxcb-cursor0", "xvfb"), uid=1000, sudo_ok=False,
                     with_sudo=with_sudo)
    assert out.returncode == 1 and out.calls == []
    assert out.stderr.splitlines() == [
        "install-system-deps: missing system packages; run:  "
        "sudo apt-get install -y libxcb-cursor0 xvfb"]


@pytest.mark.process
def test_dry_run_prints_instead_of_installing(tmp_path: Path) -> None:
    out = run_script(tmp_path, all_but("fio"), uid=0, sudo_ok=False, args=("--dry-run",))
    assert out.returncode == 0 and out.calls == []
    assert out.stdout.splitlines()[-1] == ("would run: env DEBIAN_FRONTEND=noninteractive "
                                           "apt-get install -y -qq fio")


@pytest.mark.process
def test_a_system_without_dpkg_is_told_what_to_install(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}  # no dpkg-query, no apt-get
    result = subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True,
                            timeout=budget_s(30))
    assert result.returncode == 0
    assert "not a Debian/Ubuntu system" in result.stderr and "libxcb-cursor0" in result.stderr
