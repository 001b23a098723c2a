"""Start an installed ``storwatt gui`` on an X display, wait for its main window, screenshot it.

Used by the packaging test under ``xvfb-run -a`` (and handy on a real lab PC after an upgrade):

    xvfb-run -a -s "-screen 0 1600x1000x24" python packaging/linux/gui_probe.py \\
        --exe /usr/bin/storwatt --screenshot /tmp/storwatt-gui.png

The window is found the way a user would see it — a mapped top-level X window whose title
contains ``StorWatt`` (``xwininfo``) — so a bundle missing a Qt platform plugin, a font or a
pyqtgraph template fails here even though ``--self-test`` (headless) passed. Exit status 0
when the window appeared and the screenshot shows more than a blank screen.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from PIL import ImageGrab

WINDOW_LINE = re.compile(r'^\s*(0x[0-9a-f]+) "([^"]*)"', re.MULTILINE)
PAINT_SETTLE_S = 2.0  # the window maps before pyqtgraph has drawn its first frame
MIN_COLOURS = 16  # a blank or single-colour screen has a handful at most


class ProbeError(Exception):
    """The GUI did not come up as expected; the message says what was seen."""


def mapped_windows(title_part: str) -> list[tuple[str, str]]:
    """(window id, title) of every viewable X window whose title contains ``title_part``."""
    tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True,
                          errors="replace", check=True).stdout
    found = []
    for wid, title in WINDOW_LINE.findall(tree):
        if title_part in title:
            info = subprocess.run(["xwininfo", "-id", wid], capture_output=True, text=True,
                                  errors="replace").stdout
            if "IsViewable" in info:
                found.append((wid, title))
    return found


def wait_for_window(proc: subprocess.Popen, title_part: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ProbeError(f"storwatt gui exited with status {proc.returncode} before a "
                             f"window titled '*{title_part}*' appeared")
        windows = mapped_windows(title_part)
        if windows:
            return windows[0][1]
        time.sleep(0.25)
    raise ProbeError(f"no window titled '*{title_part}*' within {timeout_s:.0f} s")


def screenshot(path: Path) -> int:
    """Grab the whole X screen into ``path``; returns how many colours it has."""
    image = ImageGrab.grab(xdisplay=os.environ["DISPLAY"])
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    return (1 << 16) if colours is None else len(colours)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def probe(exe: str, shot: Path, title_part: str, timeout_s: float) -> str:
    if not os.environ.get("DISPLAY"):
        raise ProbeError("DISPLAY is not set; run under xvfb-run -a")
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}  # real xcb, please
    log_path = shot.with_suffix(".log")  # a file, not a pipe: a chatty GUI cannot block on it
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.Popen([exe, "gui", "--lab", "sim"], env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        title = wait_for_window(proc, title_part, timeout_s)
        time.sleep(PAINT_SETTLE_S)
        colours = screenshot(shot)
        if colours < MIN_COLOURS:
            raise ProbeError(f"screenshot {shot} has only {colours} colours: window not drawn")
        if proc.poll() is not None:
            raise ProbeError(f"storwatt gui exited with status {proc.returncode} after showing")
        return f"window '{title}' shown; screenshot {shot} ({colours} colours)"
    except ProbeError as exc:
        stop(proc)
        output = log_path.read_text(errors="replace")
        raise ProbeError(f"{exc}\n--- storwatt gui output ---\n{output[-4000:]}") from None
    finally:
        if proc.poll() is None:
            stop(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gui_probe")
    parser.add_argument("--exe", required=True, help="the storwatt executable or launcher")
    parser.add_argument("--screenshot", required=True, type=Path, help="PNG to write")
    parser.add_argument("--title", default="StorWatt", help="part of the main window title")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait")
    args = parser.parse_args(argv)
    try:
        print(probe(args.exe, args.screenshot, args.title, args.timeout))
    except ProbeError as exc:
        print(f"gui_probe: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
