"""Run one fio process safely: own process group, parent-death signal, graceful stop.

method-notes §9: SIGINT/SIGTERM make fio exit (128) with a complete final JSON document, but a
SIGKILL leaves its worker processes orphaned. So fio starts in its own process group, is
stopped with SIGINT to the group and escalated to SIGTERM and SIGKILL only if it does not
exit, and on Linux asks the kernel to send it SIGTERM if the station dies (PR_SET_PDEATHSIG)
so a crashed station never leaves fio writing to a device. argv lists only: no user text ever
goes through a shell.

How the death signal is armed matters to the sampling loop (issue 27). A ``preexec_fn`` makes
CPython fork the whole interpreter with the GIL held instead of its ``vfork`` fast path, so the
meter polls stalled while the clients of 8 load hosts were forked (poll lateness p99 13.2 ms
against a 10 ms goal, docs/performance.md). Where util-linux ``setpriv`` can arm the signal
(``--pdeathsig``), fio is started through it and a fixed ``/bin/sh`` guard with no
``preexec_fn``: ``setpriv`` sets the signal, the guard exits if the station already died before
that (the signal would then never come) and execs fio, which so keeps the pid, process group
and argv it was started with. Otherwise (no ``setpriv``, or a kernel that refuses) the
``preexec_fn`` does the same in the forked child.
"""

from __future__ import annotations

import codecs
import ctypes
import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from functools import cache

from drivers.fio import sessions
from drivers.fio.stream import DocumentSplitter

PR_SET_PDEATHSIG = 1


def _death_watch(parent: int) -> Callable[[], None]:
    """preexec_fn: SIGTERM this child when the station dies, and exit at once if it already
    died between fork and prctl (then the signal would never come)."""

    def arm() -> None:  # pragma: no cover - runs in the child between fork and exec
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except OSError:
            pass
        if os.getppid() != parent:
            os._exit(1)

    return arm


#: the guard ``setpriv`` execs: ``$1`` is the station's pid, the rest fio's argv; no user text
#: is parsed by the shell (it only passes the words on)
_GUARD = 'test "$PPID" = "$1" || exit 1; shift; exec "$@"'


@cache
def pdeathsig_setpriv() -> str | None:
    """util-linux ``setpriv`` when it arms a parent-death signal on this machine (Linux,
    ``--pdeathsig`` since util-linux 2.33, a kernel that allows it), else None. Tried once per
    process: ``setpriv`` re-running itself with the option."""
    found = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if found is None:
        return None
    try:
        probe = subprocess.run([found, "--pdeathsig", "TERM", "--", found, "--version"],
                               capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


def launch(argv: Sequence[str]) -> tuple[list[str], Callable[[], None] | None]:
    """The argv to start and the ``preexec_fn`` (None when none is needed) that make ``argv``
    receive SIGTERM when this process dies (see the module's docstring)."""
    if not sys.platform.startswith("linux"):
        return list(argv), None
    setpriv = pdeathsig_setpriv()
    if setpriv is None:
        return list(argv), _death_watch(os.getpid())
    if shutil.which(argv[0]) is None:  # as Popen would say it, not the guard's exit 127
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    return [setpriv, "--pdeathsig", "TERM", "--", "/bin/sh", "-c", _GUARD, "storwatt-fio",
            str(os.getpid()), *argv], None


#: how long a reader may take to reach the end of an ended fio's pipes
STDERR_GRACE_S = 0.5


class FioProcess:
    """A running fio whose JSON documents arrive on a queue, stamped with ``clock()``.

    stdout is read in chunks as they come, not by lines: fio ends its ETA status lines with
    ``\\r``, so a line reader would hold each one back until the next newline. ``on_text``,
    if given, receives every chunk with its arrival time (the clock probe reads ETA lines).
    ``pass_fds``: descriptors fio inherits (the targets the station checked and holds open,
    ``drivers.fio.pinned``)."""

    def __init__(self, argv: Sequence[str], clock: Callable[[], float], cwd: str | None = None,
                 on_text: Callable[[float, str], None] | None = None,
                 pass_fds: Sequence[int] = ()):
        self.argv = list(argv)
        self.clock = clock
        self.on_text = on_text
        self.documents: queue.Queue[tuple[float, dict]] = queue.Queue()
        self.splitter = DocumentSplitter()
        self._stderr: list[str] = []
        self.stopped_by_us = False
        #: the sessions of fio's job processes (each calls setsid), learnt while fio runs
        self.job_sessions: set[int] = set()
        #: what stopping fio found, for the phase's cause ("" when fio ended on SIGINT)
        self.stop_finding = ""
        started, preexec_fn = launch(self.argv)
        self.proc = subprocess.Popen(
            started, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, text=True,
            start_new_session=True, pass_fds=tuple(pass_fds), preexec_fn=preexec_fn)
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._readers:
            t.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()  # read raw: the text wrapper is never used
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while raw := os.read(fd, 65536):
            chunk = decoder.decode(raw)
            if self.on_text is not None:
                self.on_text(self.clock(), chunk)
            for doc in self.splitter.feed(chunk):
                self._learn_jobs()
                self.documents.put((self.clock(), doc))

    def _learn_jobs(self) -> None:
        """Note the sessions of fio's job processes while they are still its children (about
        1 ms a scan of /proc, once a status document, off the sampling thread)."""
        if self.proc.poll() is None:  # a new set, never changed in place: stop() may be
            # going through the old one on another thread
            self.job_sessions = self.job_sessions | sessions.child_sessions(self.proc.pid,
                                                                            self.proc.pid)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line.rstrip())

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def exited(self) -> bool:
        return self.proc.poll() is not None

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def stderr_text(self) -> str:
        """fio's last lines on stderr (and any text among its documents). Once fio has ended,
        its readers are given up to ``STDERR_GRACE_S`` to reach the end of its pipes: on a loaded
        machine the exit code was seen before the reader had taken "Input/output error",
        and the error named only the code."""
        if self.proc.poll() is not None:
            for reader in self._readers:
                reader.join(STDERR_GRACE_S)
        lines = [ln for ln in self._stderr + self.splitter.text_lines if ln]
        return "\n".join(lines[-8:])

    def drain(self) -> list[tuple[float, dict]]:
        out = []
        while True:
            try:
                out.append(self.documents.get_nowait())
            except queue.Empty:
                return out

    def stop(self, grace_s: float = 5.0, term_s: float = 3.0, kill_s: float = 5.0) -> int:
        """SIGCONT to fio and to every job's session first (a stopped fio, SIGSTOP or ^Z,
        would sit on every other signal), SIGINT to the group (fio then prints its final
        document), then SIGTERM, then SIGKILL to the whole group; then the jobs' sessions are
        continued, terminated and killed after a bound (``sessions.end_sessions``): a job
        lives in a session of its own, which the group's signals never reach. What was found
        (fio stopped, fio deaf to SIGINT, a job that would not end) is kept in
        ``stop_finding`` for the phase's cause. Waits for the readers."""
        self._learn_jobs()
        if not self.exited:
            self.stopped_by_us = True
            main = sessions.read_stat(self.proc.pid)
            held = [s.pid for s in [main, *sessions.members(self.job_sessions)]
                    if s is not None and s.stopped]
            for pgid in (self.proc.pid, *self.job_sessions):
                try:
                    os.killpg(pgid, signal.SIGCONT)
                except (ProcessLookupError, PermissionError):
                    pass
            ended_by = self._end_main(grace_s, term_s, kill_s)
            self.stop_finding = self._finding(held, ended_by, grace_s)
        self.proc.wait()
        try:  # a worker that outlived its parent must not keep writing to the target
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        left = sessions.end_sessions(self.job_sessions, term_s, kill_s)
        if left and "did not end on SIGKILL" not in self.stop_finding:  # once, not per stop
            self.stop_finding = "; ".join(filter(None, (
                self.stop_finding, f"fio's job process {', '.join(map(str, left))} did not "
                f"end on SIGKILL within {kill_s:g} s (held in the kernel by IO on its "
                "target?): the target may still be in use")))
        for t in self._readers:
            t.join(5.0)
        return self.proc.returncode

    def _end_main(self, grace_s: float, term_s: float, kill_s: float) -> signal.Signals | None:
        """SIGINT, SIGTERM, SIGKILL to fio's group, each given its time; the signal it ended
        on (None: it had already ended)."""
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, term_s),
                            (signal.SIGKILL, kill_s)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return None
            try:
                self.proc.wait(wait_s)
                return sig
            except subprocess.TimeoutExpired:
                continue
        return signal.SIGKILL

    @staticmethod
    def _finding(held: list[int], ended_by: signal.Signals | None, grace_s: float) -> str:
        """One clause naming a stopped or stalled fio; "" for a fio that ended on SIGINT."""
        parts = []
        if held:
            which = "process" if len(held) == 1 else "processes"
            parts.append(f"fio was found stopped (SIGSTOP or ^Z: {which} "
                         f"{', '.join(map(str, held))} in state T) and was continued to end")
        if ended_by in (signal.SIGTERM, signal.SIGKILL):
            parts.append(f"fio did not end within {grace_s:g} s of SIGINT (stopped or stalled: "
                         f"its IO or its target hung) and was ended with {ended_by.name}")
        return "; ".join(parts)
