"""Version metadata for the bundle, derived from ``app.__version__`` (the one place it is set).

Windows shows the version resource in the file's Properties and Inno Setup copies it into
"Apps & features"; Debian wants a version string it can compare. Both are computed here so
the spec, the .deb script and the installer never disagree.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPANY = "StorWatt"
DESCRIPTION = "StorWatt storage power-efficiency test station"


def app_version() -> str:
    """``app.__version__`` read from the source, so no dependency needs to be importable."""
    text = (ROOT / "app" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.MULTILINE)
    if match is None:
        raise ValueError(f"{ROOT / 'app' / '__init__.py'}: no __version__ = '...' line")
    return match.group(1)


def numeric_version(version: str) -> tuple[int, int, int, int]:
    """The four 16-bit numbers a Windows version resource holds: ``1.2.3rc1`` → (1, 2, 3, 0)."""
    numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3]]
    if not numbers:
        raise ValueError(f"version {version!r} has no numeric part")
    if any(n > 0xFFFF for n in numbers):
        raise ValueError(f"version {version!r}: Windows allows at most 65535 per part")
    return tuple((numbers + [0, 0, 0, 0])[:4])  # type: ignore[return-value]  # four, by the slice


def debian_version(version: str) -> str:
    """Debian sorts a pre-release before its release only with ``~``: 1.0rc1 → 1.0~rc1."""
    return re.sub(r"(?<=\d)(a|b|rc|dev)", r"~\1", version.replace("-", "~"))


def windows_version_info(version: str):
    """PyInstaller's VSVersionInfo for ``storwatt.exe`` (imported lazily: build-time only)."""
    from PyInstaller.utils.win32 import versioninfo as vi

    numbers = numeric_version(version)
    strings = [
        vi.StringStruct("CompanyName", COMPANY),
        vi.StringStruct("FileDescription", DESCRIPTION),
        vi.StringStruct("FileVersion", version),
        vi.StringStruct("InternalName", "storwatt"),
        vi.StringStruct("OriginalFilename", "storwatt.exe"),
        vi.StringStruct("ProductName", "StorWatt"),
        vi.StringStruct("ProductVersion", version),
    ]
    return vi.VSVersionInfo(
        ffi=vi.FixedFileInfo(filevers=numbers, prodvers=numbers),
        kids=[vi.StringFileInfo([vi.StringTable("040904B0", strings)]),
              vi.VarFileInfo([vi.VarStruct("Translation", [0x0409, 1200])])],
    )


if __name__ == "__main__":  # used by the build scripts: print the version in a given flavour
    import sys

    flavour = sys.argv[1] if len(sys.argv) > 1 else "plain"
    v = app_version()
    print({"plain": v, "deb": debian_version(v),
           "numeric": ".".join(map(str, numeric_version(v)))}[flavour])
