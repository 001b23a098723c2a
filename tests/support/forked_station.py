"""Station processes for crash drills, forked from one parent that has already imported the
station, so a drill of 50 SIGKILLs does not pay 50 Python start-ups.

Each drill child is a real process with its own storage and run journal, killed with a real
SIGKILL; only the interpreter start and the imports (~0.7 s of CPU each, most of a drill's
CPU) are done once per pytest worker, by multiprocessing's fork server with the station's
modules preloaded. A child reports what it did through ``emit(line)``: one message per line
on a pipe, written whole before ``emit`` returns, so a line the parent did not get was never
sent (the drills count what was published before the kill).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection

#: imported once in the fork server, before any child is forked from it
PRELOAD = ["tests.support.drill_children"]

Emit = Callable[[str], None]


def _context() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _child_main(target: Callable[..., None], pipe: Connection, data_dir: str | None,
                args: tuple) -> None:
    if data_dir is not None:
        os.environ["STORWATT_DATA_DIR"] = data_dir  # this station's journal folder
    target(lambda line: pipe.send_bytes(line.encode()), *args)


class ForkedStation:
    """One drill child: started at once, its lines handed to ``on_line`` on a reader thread
    until it ends or is killed. Its data folder is ``data_dir``, else this process's
    ``STORWATT_DATA_DIR`` now: the fork server's environment is the one of whichever test
    started it first."""

    def __init__(self, target: Callable[..., None], *args: object,
                 on_line: Callable[[str], None], data_dir: str | None = None) -> None:
        context = _context()
        data_dir = data_dir if data_dir is not None else os.environ.get("STORWATT_DATA_DIR")
        reading, writing = context.Pipe(duplex=False)
        self.process = context.Process(target=_child_main,
                                       args=(target, writing, data_dir, args), daemon=True)
        self.process.start()
        writing.close()  # the child holds the only writing end: its death ends the reader
        self._reader = threading.Thread(target=self._read, args=(reading, on_line), daemon=True)
        self._reader.start()

    @staticmethod
    def _read(reading: Connection, on_line: Callable[[str], None]) -> None:
        with reading:
            while True:
                try:
                    line = reading.recv_bytes().decode()
                except (EOFError, OSError):
                    return
                on_line(line)

    def kill(self, timeout_s: float = 10.0) -> None:
        """SIGKILL, then wait for the process and for every line it had sent."""
        self.process.kill()
        self.process.join(timeout_s)
        self._reader.join(timeout_s)
