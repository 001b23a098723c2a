"""Talking to a station started as a child process: reading its output until a marker."""

from __future__ import annotations

import os
import selectors
import time


def read_until(fd: int, marker: bytes, timeout: float) -> bytes:
    """Read ``fd`` until ``marker`` appears (or fail after ``timeout`` s); the CLI drills share
    it."""
    seen = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while marker not in seen and time.monotonic() < deadline:
            if sel.select(timeout=1.0):
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                seen += chunk
    assert marker in seen, seen.decode(errors="replace")
    return seen
