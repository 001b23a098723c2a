"""The size of a target as a load host's own fio sees it (docs/method-notes.md §2, *Ranges in
whole blocks*): the curved hot band needs its bands in bytes, and the station cannot read a
device on another machine.

fio's JSON report names no file size, and two other routes failed on fio 3.33 through
``--client``: the per-IO log a client returns lost its tail (31 reads done, 24 logged), and a
sequential read with holes (``rw=read:S``) wrapped round the file instead of ending. What
held, on the station and through a loopback ``fio --server`` alike: one 512-byte read at
offset ``X`` completes (exit 0, one IO in the report) exactly when ``X + 512`` is inside the
target, and is refused ("blocksize is larger than data set range", "you need to specify valid
offset=", exit 1) when it is not. So the size is found by bisection on whole sectors: a
doubling search for an offset past the end, then halving — about 2 × log₂(size / 512) one-IO
reads (76 for 100 TB), read-only, on the target the user named. The result is the size in
whole sectors: the range a 512-byte-aligned job addresses (a file's partial last sector is
left out).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drivers.fio import clients
from drivers.fio.ceiling import job_reports, null_engine_report
from drivers.interfaces import WorkloadError

SECTOR = 512
#: the first offset tried past the start: the doubling search grows from here
FIRST_PROBE = 1 << 30

#: runs one job file's text; True when its one read completed, False when fio refused it
ReadsAt = Callable[[str], bool]


def probe_text(target: str, offset: int, ioengine: str = "psync") -> str:
    """One 512-byte read of ``target`` at ``offset``; nothing is ever written."""
    return "\n".join(["[global]", f"ioengine={ioengine}", f"filename={target}", "direct=0",
                      "allow_file_create=0", "", "[size-probe]", "rw=read", f"bs={SECTOR}",
                      "number_ios=1", f"offset={offset}", ""])


def target_size(reads_at: ReadsAt, target: str, ioengine: str = "psync") -> int:
    """``target``'s size in whole sectors, from single reads (module notes)."""
    def fits(sector: int) -> bool:
        return reads_at(probe_text(target, sector * SECTOR, ioengine))

    if not fits(0):
        raise WorkloadError(f"fio could not read the first sector of {target}: its size "
                            "cannot be told (is it there, readable and not empty?)")
    low, high = 0, FIRST_PROBE // SECTOR  # sector ``low`` fits; ``high`` is to be tried
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:  # ``low`` fits, ``high`` does not
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return (low + 1) * SECTOR


def agreed_size(sizes: dict[str, int], target: str) -> int:
    """The one size every load host reported for ``target``; a clear refusal when they differ
    (the hot band's bands would lie at different bytes on each host)."""
    found = set(sizes.values())
    if len(found) != 1:
        listed = ", ".join(f"{host}: {size:,} bytes" for host, size in sizes.items())
        raise WorkloadError(f"the load hosts' {target} differ in size ({listed}): the hot "
                            "band's bands would lie at different bytes on each; give every "
                            "host a target of one size, or the target size")
    return found.pop()


def host_target_size(binary: str, host: str, target: str, folder: Path) -> int:
    """``target``'s size on load host ``host``, read by that host's fio through its client."""
    return target_size(host_reads_at(binary, host, target, folder), target)


def host_reads_at(binary: str, host: str, target: str, folder: Path) -> ReadsAt:
    """Whether one read (a job file's text, written in ``folder``) completes on load host
    ``host``; a host that does not answer is named, not taken for a read past the end."""
    folder.mkdir(parents=True, exist_ok=True)
    job = folder / "size-probe.fio"
    argv = [binary, f"--client={clients.client_argument(host)}"]

    def reads_at(text: str) -> bool:
        job.write_text(text)
        try:
            report = null_engine_report(argv, job, f"the size probe on load host {host}", 60)
        except WorkloadError as exc:
            if clients.connection_refused(str(exc)):
                raise WorkloadError(f"load host {host} did not answer the size probe of "
                                    f"{target}: {exc}") from None
            return False  # fio refused the read: the offset is past the end
        return sum(int(j["read"]["total_ios"]) for j in job_reports(report)) == 1
    return reads_at
